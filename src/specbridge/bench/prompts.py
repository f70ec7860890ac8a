"""Prompts for `specbridge bench`: a JSONL/text file, the bundled validation prompts (specbridge/data/prompts/val.jsonl), or a small built-in set."""

from __future__ import annotations

import json
from pathlib import Path

from ..bundled import PROMPTS

# used when neither --prompts nor the bundled val.jsonl is available
BUILTIN = (
    "Explain how a hash map works and when to use one.",
    "Write a short poem about the sea at night.",
    "What is the capital of France, and what is it known for?",
    "Summarize the plot of Romeo and Juliet in three sentences.",
    "Write a Python function that returns the n-th Fibonacci number.",
    "Give three tips for writing clear technical documentation.",
    "Convert 100 degrees Fahrenheit to Celsius and show the steps.",
    "Describe the water cycle to a ten-year-old.",
    "List the planets of the solar system in order from the sun.",
    "What are the main differences between TCP and UDP?",
    "Write a product description for a smart water bottle.",
    "Explain the Pythagorean theorem with an example.",
    "What causes the seasons on Earth?",
    "Write a SQL query that counts orders per customer.",
    "Give a recipe for a simple tomato soup.",
    "Explain what speculative decoding is in one paragraph.",
)

REPO_VAL = PROMPTS / "val.jsonl"
MAX_PROMPT_FILE = 64 << 20


class PromptError(ValueError):
    pass


def load_prompts(path: str | Path | None = None) -> tuple[list[str], str]:
    """(prompts, source). A .jsonl file takes `prompt` (or `text`) per line; any other file is one prompt per line."""
    if path is None:
        if REPO_VAL.is_file():
            try:
                return _read(REPO_VAL), str(REPO_VAL)
            except PromptError:
                pass
        return list(BUILTIN), "built-in"
    return _read(Path(path)), str(path)


def _read(p: Path) -> list[str]:
    try:
        if p.stat().st_size > MAX_PROMPT_FILE:
            raise PromptError(f"{p}: larger than {MAX_PROMPT_FILE >> 20} MiB")
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise PromptError(f"{p}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise PromptError(f"{p}: not UTF-8 text") from None
    out: list[str] = []
    jsonl = p.suffix in (".jsonl", ".json")
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        if jsonl:
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                raise PromptError(f"{p}:{n}: not JSON ({e.msg})") from None
            val = obj.get("prompt", obj.get("text")) if isinstance(obj, dict) else obj
            if not isinstance(val, str) or not val:
                raise PromptError(f"{p}:{n}: expected an object with a non-empty string 'prompt'")
            out.append(val)
        else:
            out.append(line)
    if not out:
        raise PromptError(f"{p}: no prompts")
    return out
