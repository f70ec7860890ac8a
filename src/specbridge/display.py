"""Untrusted text on its way to a human report.

Tensor names, config values, architectures, target and server strings — and the finding messages that
quote them — can hold `[/]` (rich markup: a MarkupError, or text silently restyled) or `$…$`
(matplotlib mathtext: a ParseError while saving a plot). Every such value passes through one of these
before it reaches rich or a plot; what we write ourselves stays markup.
"""

from __future__ import annotations

from rich.markup import escape


def markup_safe(value: object) -> str:
    """`value` as rich shows it literally, whatever brackets and backslashes it holds."""
    return escape(str(value))


def plot_safe(value: object) -> str:
    """`value` as matplotlib draws it literally: `$` escaped so no mathtext is parsed."""
    return str(value).replace("$", r"\$")  # every `$` escaped: no mathtext, and `\$` reads back as `$`
