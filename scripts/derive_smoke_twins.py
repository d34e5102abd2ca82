"""Derive the smoke tier's twins of the public grid's structures and write them to ``smoke_twins.json``.

For every operator, the first public case of each structure its hand-written smoke tier lacks is shrunk
(``evaluation/catalog/smoke_twins.py`` says how); a twin is kept only where its inputs build, its reference
runs and its outputs have the public case's outline (count, dtypes, ranks, which dims are 0, 1 or many).
Run it after changing a record's public grid or smoke tier (the test ``test_smoke_twins_are_current`` fails
until you do):

    .venv/bin/python scripts/derive_smoke_twins.py          # write the file, print what was kept and dropped
    .venv/bin/python scripts/derive_smoke_twins.py --check  # exit 1 when the file is out of date
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evaluation.catalog.smoke_twins import TWINS_FILE, derive_all  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="compare with the file instead of writing it")
    options = parser.parse_args()
    derived = derive_all(report=None if options.check else print)
    text = json.dumps(derived, indent=1, sort_keys=True) + "\n"
    if options.check:
        current = TWINS_FILE.read_text() if TWINS_FILE.exists() else ""
        if current != text:
            print(f"{TWINS_FILE} is out of date: run scripts/derive_smoke_twins.py")
            return 1
        return 0
    TWINS_FILE.write_text(text)
    kept = sum(len(items) for items in derived["twins"].values())
    print(f"wrote {kept} twins for {len(derived['twins'])} operators to {TWINS_FILE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
