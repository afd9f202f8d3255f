#!/usr/bin/env python3
"""The table of docs/errors.md: every public function x every error its
tests make it return, read from the tests themselves.

A check in a test names a public call and the status it must return, in
any of the tests' assertion macros:

    FAILS(weft_put(ep, 99, seg, 0, buf, 8), WEFT_ERR_RANK);
    CHECK(weft_prof_stat("nonsense", &s) == WEFT_ERR_CONFIG);
    EXPECT_MPI(WEFT_Hbcast(buf, 1, MPI_INT, 9, comm), MPI_ERR_ROOT, "root");

Each such macro gives (function, status) for the first public function it
calls.  `errors_table.py` prints the page; `errors_table.py --check`
fails when docs/errors.md differs from it or when a public function has no
error test at all (besides the few that cannot fail, listed below), so the
page cannot drift from the tests.
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEADERS = ("include/weft.h", "include/weft_inline.h", "include/weft_mpi.h", "include/weft_ucx.h")
PAGE = ROOT / "docs" / "errors.md"
MACROS = ("FAILS", "FAILS_CURRENT", "CHECK", "EXPECT", "EXPECT_WEFT", "EXPECT_MPI", "CHECK_MSG")
# Calls that have no error to return.
CANNOT_FAIL = {
    "weft_strerror": "returns a name for any value (\"unknown status\" outside the enum)",
    "weft_last_error": "takes no argument; \"\" when there was no error",
    "weft_prof_reset": "takes no argument; forgets the samples",
}
# What misuse each status stands for (include/weft.h).
MISUSE = {
    "WEFT_ERR_INVALID_ARG": "NULL pointer, unknown enum value, malformed string, value out of range",
    "WEFT_ERR_RANK": "rank outside the context or team",
    "WEFT_ERR_BOUNDS": "offset + size past the end of a segment (WEFT_CHECK=1: of a local buffer in one)",
    "WEFT_ERR_ALIGN": "atomic or signal word not 8-byte aligned",
    "WEFT_ERR_SEG": "NULL, freed (double free), or another context's segment",
    "WEFT_ERR_NOT_INIT": "NULL or finalised context; use after weft_finalize",
    "WEFT_ERR_AM_ID": "active-message id out of range or without a handler",
    "WEFT_ERR_CONFIG": "malformed WEFT_* setting or topology description",
    "WEFT_ERR_BUSY": "in use: AM id taken, endpoint used by a thread that does not own it, shm name taken",
    "WEFT_ERR_TOO_LARGE": "size over a documented limit",
    "WEFT_ERR_UNSUPPORTED": "not available on this path, build or setting",
    "WEFT_ERR_MPI": "an MPI call failed",
    "WEFT_ERR_NO_MEMORY": "allocation or mapping failed, or UCX ran out of memory or resources (not a misuse)",
    "WEFT_ERR_TRANSPORT": "UCX reported an error (not a misuse)",
    "WEFT_ERR_PEER_FAILED": "the target rank, or a rank a collective call needs, has failed (docs/failures.md)",
    "WEFT_ERR_TIMEOUT": "a wait lasted WEFT_TIMEOUT_MS",
}

CALL = re.compile(r"\b((?:weft|WEFT)_[A-Za-z0-9_]+)\s*\(")
STATUS = re.compile(r"\b(WEFT_ERR_[A-Z_]+|MPI_ERR_[A-Z_]+)\b")


def public_functions() -> list[str]:
    names: set[str] = set()
    decl = re.compile(r"^[A-Za-z_][A-Za-z0-9_ ]*[ *]((?:weft|WEFT)_[A-Za-z0-9_]+)\(", re.M)
    for header in HEADERS:
        names.update(decl.findall((ROOT / header).read_text()))
    # weft__*: the library's part of the inline forms, not calls of the API
    return sorted(name for name in names if not name.startswith("weft__"))


LITERAL = re.compile(r"'(?:\\.|[^'\\])'|\"(?:\\.|[^\"\\])*\"")


def blank_literals(text: str) -> str:
    """Strings and characters replaced by spaces, so parentheses in them do not count."""
    return LITERAL.sub(lambda m: " " * len(m.group(0)), text)


def macro_arguments(text: str, start: int) -> str | None:
    """The text between the parenthesis at start and its match."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return text[start + 1:i]
    return None


def checks(public: set[str]) -> dict[str, dict[str, list[str]]]:
    """function -> status -> test files that check it."""
    found: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    macro = re.compile(r"\b(" + "|".join(MACROS) + r")\s*\(")
    for path in sorted((ROOT / "tests").rglob("*.c")):
        text = blank_literals(path.read_text(errors="replace"))
        rel = str(path.relative_to(ROOT / "tests"))
        for m in macro.finditer(text):
            args = macro_arguments(text, m.end() - 1)
            if args is None:
                continue
            calls = [c for c in CALL.findall(args) if c in public and c not in ("weft_strerror", "weft_last_error")]
            statuses = STATUS.findall(args)
            if not calls or not statuses:
                continue
            for status in dict.fromkeys(statuses):
                if rel not in found[calls[0]][status]:
                    found[calls[0]][status].append(rel)
    return found


def page() -> str:
    public = public_functions()
    found = checks(set(public))
    lines = [
        "# Errors: every public function, every misuse tested",
        "",
        "Generated by `scripts/errors_table.py` from the tests' assertions (each",
        "names a call and the status it must return); `python/tests/test_errors_table.py`",
        "fails when this page and the tests disagree, or when a public function has",
        "no error test.  Every error also sets `weft_last_error()` to a message with",
        "the values involved; the MPI-style calls of weft_mpi.h return MPI error",
        "classes.",
        "",
        "## What each status means",
        "",
        "| status | misuse |",
        "|---|---|",
    ]
    lines += [f"| `{s}` | {what} |" for s, what in MISUSE.items()]
    lines += [
        "",
        "## Function × status → tests",
        "",
        "| function | status returned | tests |",
        "|---|---|---|",
    ]
    for name in public:
        if name in CANNOT_FAIL:
            lines.append(f"| `{name}` | — | cannot fail: {CANNOT_FAIL[name]} |")
            continue
        statuses = found.get(name, {})
        if not statuses:
            lines.append(f"| `{name}` | **none tested** | |")
            continue
        for i, (status, files) in enumerate(sorted(statuses.items())):
            lines.append(f"| {'`' + name + '`' if i == 0 else ''} | `{status}` | {', '.join(files)} |")
    lines.append("")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    text = page()
    if argv[1:] == ["--check"]:
        untested = [line for line in text.splitlines() if "none tested" in line]
        if untested:
            print("public functions without an error test:\n" + "\n".join(untested), file=sys.stderr)
            return 1
        if not PAGE.is_file() or PAGE.read_text() != text:
            print(f"{PAGE} is out of date: run scripts/errors_table.py > docs/errors.md", file=sys.stderr)
            return 1
        return 0
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
