"""Tensor names one a line in one string, searched by C-level substring and regex scans instead of a Python call
per name: a target's index has ~100 k names (DeepSeek-V3: 92 k), and detection or the MTP head reads only a few."""

from __future__ import annotations

from collections.abc import Collection


def name_lines(names: Collection[str]) -> str:
    """'\\n' + the names joined by '\\n' + '\\n': every name is a line between newlines. A newline inside a name
    (never in a real checkpoint) becomes NUL, so no name can pose as two."""
    text = "\n".join(names)
    if text.count("\n") != max(len(names) - 1, 0):
        text = "\n".join(n.replace("\n", "\0") for n in names)
    return f"\n{text}\n"


def lines_with(text: str, *needles: str) -> list[str]:
    """The lines of `text` holding any of `needles`, in order, each once. A needle may carry the newline that
    bounds a line ('\\nmtp.' for a name that starts so, '.enorm.weight\\n' for one that ends so)."""
    starts: set[int] = set()
    for needle in needles:
        skip = 1 if needle.startswith("\n") else 0
        i = text.find(needle)
        while i >= 0:
            starts.add(text.rfind("\n", 0, i + skip) + 1)
            i = text.find(needle, i + 1)
    return [text[s : text.find("\n", s)] for s in sorted(starts)]


def at_least(n: int) -> str:
    """A regex for the decimal numbers >= n, leading zeros allowed (as int() reads them)."""
    if n <= 0:
        return r"\d+"
    s = str(n)
    alts = [rf"[1-9]\d{{{len(s)},}}", s]
    for i, c in enumerate(s):
        if c != "9":
            rest = len(s) - i - 1
            alts.append(s[:i] + f"[{int(c) + 1}-9]" + (rf"\d{{{rest}}}" if rest else ""))
    return "0*(?:" + "|".join(alts) + ")"
