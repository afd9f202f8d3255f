"""Runs test_bench_json_writer and checks its document with a strict JSON
parser: NaN and infinities are refused (they must be written null) and the
strings come back as written."""

import json
import os
import subprocess
import sys
import tempfile


def refuse(constant: str) -> None:
    raise ValueError(f"{constant} is not JSON")


def main() -> int:
    if not ('"' in os.environ.get("UCX_TLS", "") and "\\" in os.environ["UCX_TLS"]):
        print("UCX_TLS must hold a quote and a backslash (the test's ENV)", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "out.json")
        subprocess.run([sys.argv[1], path], check=True)
        with open(path, encoding="utf-8") as f:
            text = f.read()
    document = json.loads(text, parse_constant=refuse)
    expected = {
        "benchmark": "quote\" backslash\\ newline\n tab\t bell\a del\x7f",
        "nranks": 2,
        "transport": "posix/memory",
        "ucx_tls": os.environ["UCX_TLS"],
        "nan": None,
        "inf": None,
        "finite": 0.125,
        "list": [1.5, None, None, None, 2.25],
        "rounds \"of\" \\ them": [1.5, None, None, None, 2.25],
        "number": None,
    }
    if document != expected:
        print(f"written:\n{text}\nparsed: {document!r}\nexpected: {expected!r}", file=sys.stderr)
        return 1
    print("the JSON writer escapes strings and writes null for NaN and infinities")
    return 0


if __name__ == "__main__":
    sys.exit(main())
