"""The data dir (``var/`` by default) closed to other users: the SQLite database, the on-disk broker's messages,
the generated SECRET_KEY and the logs are readable by the account that runs the site and the worker only.

Processes that write there run under a umask of 077 (``restrict_umask``), so what they create is 0700/0600 from
the start; ``secure_data_dir`` creates the folder that way and repairs the modes of one made by an older
version (0755 folders, a 0644 database) at every start.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from django.core.management.utils import get_random_secret_key

PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600


def restrict_umask() -> None:
    """Files and folders this process creates are its owner's only (the sandbox runs as another user)."""
    os.umask(0o077)


def secure_data_dir(data_dir: Path) -> None:
    """Create ``data_dir`` (0700) and take group and other bits off everything under it that we own."""
    data_dir.mkdir(mode=PRIVATE_DIR_MODE, parents=True, exist_ok=True)
    _restrict(data_dir, PRIVATE_DIR_MODE)
    for root, folders, files in os.walk(data_dir):
        for name in folders:
            _restrict(Path(root, name), PRIVATE_DIR_MODE)
        for name in files:
            _restrict(Path(root, name), PRIVATE_FILE_MODE)


def private_dir(path: Path) -> Path:
    """A folder (and its missing parents) created 0700 whatever the umask; an existing one is repaired."""
    path.mkdir(mode=PRIVATE_DIR_MODE, parents=True, exist_ok=True)
    _restrict(path, PRIVATE_DIR_MODE)
    return path


def create_private_file(path: Path) -> None:
    """Create an empty 0600 file if there is none (SQLite then makes its journal with the same mode)."""
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE_MODE))


def read_or_create_secret_key(path: Path) -> str:
    """The key in ``path``, generated there (0600) on first use, so a fresh clone has a key of its own."""
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE_MODE)
    except FileExistsError:
        descriptor = None
    if descriptor is None:
        key = path.read_text().strip()
        if not key:
            raise RuntimeError(f"{path} is empty: delete it to have a new SECRET_KEY generated, or set SECRET_KEY")
        return key
    key = get_random_secret_key()
    with os.fdopen(descriptor, "w") as handle:
        handle.write(key + "\n")
    return key


def _restrict(path: Path, mode: int) -> None:
    try:
        info = path.lstat()
    except FileNotFoundError:  # a broker message consumed while we walked
        return
    if stat.S_ISLNK(info.st_mode) or info.st_uid != os.geteuid():
        return  # never follow links out of the folder; others' files are not ours to change
    if stat.S_IMODE(info.st_mode) & 0o077:
        with contextlib.suppress(FileNotFoundError, PermissionError):
            os.chmod(path, stat.S_IMODE(info.st_mode) & ~0o077 | (mode & 0o700))
