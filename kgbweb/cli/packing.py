"""Pack a run directory (or a folder of kernel files) into a zip in memory for upload."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

ARCHIVE_SUFFIXES = (".zip", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz")


def is_archive(path: Path) -> bool:
    return path.is_file() and path.name.endswith(ARCHIVE_SUFFIXES)


def pack_run(path: Path) -> tuple[bytes, str, int]:
    """(zip bytes, file name, number of kernel files) of what the server's importer reads."""
    path = Path(path)
    if path.is_file() and path.suffix == ".py":
        files = [(path, path.name)]
    else:
        kernel_dir = path / "kernels"
        sources = sorted(kernel_dir.glob("*.py")) if kernel_dir.is_dir() else sorted(path.glob("*.py"))
        files = [(source, str(source.relative_to(path))) for source in sources]
        files += [(path / name, name) for name in ("progress.json", "results.json") if (path / name).is_file()]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for source, name in files:
            archive.write(source, name)
    kernels = sum(1 for _, name in files if name.endswith(".py"))
    return buffer.getvalue(), (path.name or "run") + ".zip", kernels
