"""The one rich Console setup of the human reports (check, inspect, engines): a leaf both report modules use."""

from __future__ import annotations

import os
import sys

from rich.console import Console

PIPE_WIDTH = 100


def make_console() -> Console:
    """Terminal width on a terminal or from COLUMNS; 100 columns of plain text in a pipe."""
    tty = sys.stdout.isatty()
    width = None if tty or os.environ.get("COLUMNS", "").isdigit() else PIPE_WIDTH
    return Console(highlight=False, soft_wrap=False, emoji=False, width=width)
