"""Prompt files, read one way by eval, train, bench and sweep, so the same file means the same workload.

A `.jsonl`/`.json` file (or any line starting with `{`) holds one object per line: `{"prompt": text}`
(or `"text"`), `{"messages": [chat messages]}`, or `{"prompt_ids": [token ids]}` for a target without a
tokenizer. Any other line is one prompt as text; for a target without a tokenizer, token ids separated by
spaces. `token_ids` applies the target's chat template (with the assistant header), as EAGLE-3 training
and chat serving do.
"""

from __future__ import annotations

import json
from pathlib import Path

MAX_PROMPT_FILE = 64 << 20

Prompt = str | list  # text, token ids, or chat messages


class PromptError(ValueError):
    pass


def read_prompts(path: str | Path, limit: int | None = None) -> list[Prompt]:
    """Every prompt of the file, in order (the first `limit`); a line that is none says where and why."""
    p = Path(path)
    try:
        if p.stat().st_size > MAX_PROMPT_FILE:
            raise PromptError(f"{p}: larger than {MAX_PROMPT_FILE >> 20} MiB")
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise PromptError(f"{p}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise PromptError(f"{p}: not UTF-8 text") from None
    jsonl = p.suffix in (".jsonl", ".json")
    out: list[Prompt] = []
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if line:
            out.append(_json_prompt(p, n, line) if jsonl or line.startswith("{") else line)
    if not out:
        raise PromptError(f"{p}: no prompts")
    return out[:limit] if limit else out


def _json_prompt(p: Path, n: int, line: str) -> Prompt:
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as e:
        raise PromptError(f"{p}:{n}: not JSON ({e.msg})") from None
    if isinstance(obj, dict):
        if isinstance(obj.get("prompt_ids"), list) and all(type(i) is int for i in obj["prompt_ids"]):
            return list(obj["prompt_ids"])
        if isinstance(obj.get("messages"), list) and obj["messages"]:
            return obj["messages"]
        val = obj.get("prompt", obj.get("text"))
        if isinstance(val, str) and val:
            return val
    raise PromptError(f"{p}:{n}: expected an object with a non-empty 'prompt' (or 'text'), 'messages' or 'prompt_ids'")


def is_ids(prompt: Prompt) -> bool:
    return isinstance(prompt, list) and all(type(t) is int for t in prompt)


def token_ids(tokenizer, prompt: Prompt) -> list[int]:
    """The prompt as the target reads it: ids as given; text or messages through the chat template when the
    tokenizer has one, plain tokenization otherwise; text of integers when there is no tokenizer."""
    if is_ids(prompt):
        return list(prompt)
    if tokenizer is None:
        try:
            return [int(x) for x in str(prompt).split()]
        except ValueError:
            raise PromptError("the target has no tokenizer: give prompts as token ids") from None
    messages = prompt if isinstance(prompt, list) else [{"role": "user", "content": prompt}]
    if getattr(tokenizer, "chat_template", None):
        ids = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
        if isinstance(ids, dict) or hasattr(ids, "keys"):
            ids = ids["input_ids"]
        return list(ids)
    return list(tokenizer(messages[-1]["content"])["input_ids"])


def text_of(prompt: Prompt) -> str:
    """The prompt as raw text (what a plain completions request sends)."""
    if isinstance(prompt, str):
        return prompt
    if is_ids(prompt):
        raise PromptError("token-id prompts have no text to send to a server")
    return str(prompt[-1].get("content", "")) if isinstance(prompt[-1], dict) else str(prompt[-1])
