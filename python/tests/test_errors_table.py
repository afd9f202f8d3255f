"""docs/errors.md is what scripts/errors_table.py makes of the tests'
error assertions, and every public function has an error test."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "errors_table.py"


def test_errors_page_matches_the_tests() -> None:
    done = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_every_public_function_is_listed() -> None:
    page = (ROOT / "docs" / "errors.md").read_text()
    for name in ("weft_put_nbi", "weft_ucx_target", "WEFT_Team_comm", "weft_am_dropped"):
        assert f"| `{name}` |" in page
    assert "none tested" not in page


def test_a_status_is_read_through_string_literals() -> None:
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        import errors_table
    finally:
        sys.path.pop(0)
    text = errors_table.blank_literals('FAILS(weft_put(ep, 9, s, 0, ")", 8), WEFT_ERR_RANK);')
    start = text.index("(")
    args = errors_table.macro_arguments(text, start)
    assert args is not None and "WEFT_ERR_RANK" in args and args.startswith("weft_put(")
