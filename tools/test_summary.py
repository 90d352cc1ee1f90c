"""Count passed, failed and skipped tests in pytest's JUnit XML files (one line, for tools/test.sh).

    python tools/test_summary.py RESULTS.xml...

A file that is missing or unreadable (pytest crashed before writing it) counts as one failure.
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path


def counts(path: Path) -> tuple[int, int, int]:
    """(passed, failed, skipped); errors count as failures."""
    try:
        root = ElementTree.parse(path).getroot()
    except (OSError, ElementTree.ParseError):
        return 0, 1, 0
    suites = [root] if root.tag == "testsuite" else root.iter("testsuite")
    passed = failed = skipped = 0
    for suite in suites:
        total, skip = int(suite.get("tests", 0)), int(suite.get("skipped", 0))
        fail = int(suite.get("failures", 0)) + int(suite.get("errors", 0))
        passed, failed, skipped = passed + total - fail - skip, failed + fail, skipped + skip
    return passed, failed, skipped


def main(paths: list[str]) -> str:
    total = [0, 0, 0]
    for path in paths:
        for row, value in enumerate(counts(Path(path))):
            total[row] += value
    return f"{total[0]} passed, {total[1]} failed, {total[2]} skipped"


if __name__ == "__main__":
    print(main(sys.argv[1:]))
