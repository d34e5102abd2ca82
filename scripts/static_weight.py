"""Print the bytes a browser downloads for the site's static assets: raw, gzip and brotli as WhiteNoise
compresses them at collectstatic. Usage: .venv/bin/python scripts/static_weight.py [FILE ...]
(default: every .js and .css under static/)."""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

import brotli

ROOT = Path(__file__).resolve().parent.parent


def weights(data: bytes) -> tuple[int, int, int]:
    # WhiteNoise's own settings: gzip level 9 and brotli's default (quality 11).
    return len(data), len(gzip.compress(data, compresslevel=9, mtime=0)), len(brotli.compress(data))


def main(argv: list[str]) -> int:
    paths = [Path(arg) for arg in argv] or sorted(
        path for path in (ROOT / "static").rglob("*") if path.suffix in (".js", ".css")
    )
    print(f"{'file':60} {'raw':>10} {'gzip':>10} {'brotli':>10}")
    totals = [0, 0, 0]
    for path in paths:
        sizes = weights(path.read_bytes())
        totals = [total + size for total, size in zip(totals, sizes, strict=True)]
        name = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)
        print(f"{name:60} {sizes[0]:>10,} {sizes[1]:>10,} {sizes[2]:>10,}")
    print(f"{'total':60} {totals[0]:>10,} {totals[1]:>10,} {totals[2]:>10,}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
