"""A one-line progress bar on stderr (redrawn in place on a terminal, one line per change otherwise)."""

from __future__ import annotations

import sys
from typing import TextIO


class ProgressBar:
    def __init__(self, stream: TextIO | None = None, width: int = 30) -> None:
        self.stream = stream or sys.stderr
        self.width = width
        self.last = ""
        self.interactive = self.stream.isatty()

    def update(self, finished: int, total: int, passed: int, note: str = "") -> None:
        filled = int(self.width * finished / total) if total else 0
        line = f"[{'#' * filled}{'.' * (self.width - filled)}] {finished}/{total} finished, {passed} passed" + (
            f"  {note}" if note else ""
        )
        if line == self.last:
            return
        self.last = line
        if self.interactive:
            self.stream.write("\r" + line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.interactive and self.last:
            self.stream.write("\n")
            self.stream.flush()
