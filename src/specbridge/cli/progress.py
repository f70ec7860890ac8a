"""A progress bar for long copies: bytes, rate and time left, on a terminal only.

It appears once a copy has run for a second (a quick convert prints nothing extra), never on a pipe
or under --json, and imports rich only when it is about to draw.
"""

from __future__ import annotations

import sys
import time

SHOW_AFTER_S = 1.0


class CopyProgress:
    """Callable with a byte count (the writer's `progress` hook); a context manager that clears the bar."""

    def __init__(self, total_bytes: int, label: str, enabled: bool | None = None, stream=None):
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.total, self.label, self.done = total_bytes, label, 0
        self.started = time.monotonic()
        self._bar = None  # the rich Progress, once shown
        self._task = None

    def __call__(self, nbytes: int) -> None:
        self.done += nbytes
        if not self.enabled:
            return
        if self._bar is None and time.monotonic() - self.started >= SHOW_AFTER_S:
            self._show()
        if self._bar is not None:
            self._bar.update(self._task, completed=self.done)

    def _show(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn, TransferSpeedColumn

        self._bar = Progress(
            TextColumn("{task.description}", markup=False),
            BarColumn(),
            DownloadColumn(),
            TransferSpeedColumn(),
            TimeRemainingColumn(),
            console=Console(file=self.stream, markup=False, emoji=False),
            transient=True,
        )
        self._task = self._bar.add_task(self.label, total=self.total, completed=self.done)
        self._bar.start()

    def __enter__(self) -> CopyProgress:
        return self

    def __exit__(self, *exc) -> None:
        if self._bar is not None:
            self._bar.stop()
