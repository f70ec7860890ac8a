"""Prompts for `specbridge bench`: a JSONL/text file, the bundled validation prompts (specbridge/data/prompts/val.jsonl), or a small built-in set."""

from __future__ import annotations

from pathlib import Path

from ..bundled import PROMPTS
from ..prompts import PromptError, read_prompts, text_of

__all__ = ["BUILTIN", "PromptError", "REPO_VAL", "load_prompts"]

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


def load_prompts(path: str | Path | None = None) -> tuple[list[str], str]:
    """(prompts as text, source): the file (read as eval and train read it), else the bundled validation
    prompts, else a small built-in set."""
    if path is None:
        if REPO_VAL.is_file():
            try:
                return [text_of(p) for p in read_prompts(REPO_VAL)], str(REPO_VAL)
            except PromptError:
                pass
        return list(BUILTIN), "built-in"
    return [text_of(p) for p in read_prompts(path)], str(path)
