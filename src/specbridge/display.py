"""Untrusted text on its way to a human report.

Tensor names, config values, architectures, target and server strings — and the finding messages that
quote them — can hold `[/]` (rich markup: a MarkupError, or text silently restyled) or `$…$`
(matplotlib mathtext: a ParseError while saving a plot). Every such value passes through one of these
before it reaches rich or a plot; what we write ourselves stays markup.
"""

from __future__ import annotations

import re

# rich.markup.escape's own pattern and rule (rich 13-15), here so that escaping a value does not import rich (~25 ms):
# check's piped report is written without it (cli/console.PlainPage); tests/test_plain_page.py holds the two equal.
_TAG_LIKE = re.compile(r"(\\*)(\[[a-z#/@][^[]*?])")


def _double_backslashes(match: re.Match) -> str:
    backslashes, text = match.groups()
    return f"{backslashes}{backslashes}\\{text}"


def markup_safe(value: object) -> str:
    """`value` as rich shows it literally, whatever brackets and backslashes it holds (rich.markup.escape)."""
    markup = _TAG_LIKE.sub(_double_backslashes, str(value))
    if markup.endswith("\\") and not markup.endswith("\\\\"):
        return markup + "\\"
    return markup


def plot_safe(value: object) -> str:
    """`value` as matplotlib draws it literally: `$` escaped so no mathtext is parsed."""
    return str(value).replace("$", r"\$")  # every `$` escaped: no mathtext, and `\$` reads back as `$`
