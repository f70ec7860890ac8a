"""Prompt files, read one way by eval, train, bench and sweep, so the same file means the same workload.

A `.jsonl`/`.json` file (or any line starting with `{`) holds one object per line: `{"prompt": text}`
(or `"text"`), `{"messages": [chat messages]}`, or `{"prompt_ids": [token ids]}` for a target without a
tokenizer. Any other line is one prompt as text; for a target without a tokenizer, token ids separated by
spaces.

One workload everywhere (eval, bench, sweep; train reads prompts the same way): a prompts file means the
same token sequences whichever command reads it, and every command generates by the same stopping rule.

Prompt format (`--prompt-format`, PROMPT_FORMATS):
  chat (default)  the target's chat template with the assistant header (add_generation_prompt), as EAGLE-3
                  training and chat serving do; a target without a chat template: plain tokenization
  raw             the text tokenized as it is (the tokenizer's special tokens, e.g. BOS, added); a chat
                  record's last message is its text
  A `prompt_ids` record is sent as it is in both formats. eval tokenizes with the target's tokenizer
  (`token_ids`); bench and sweep ask the server's own /tokenize endpoint (`tokenize_request`: the same
  chat template, rendered by the engine, and no torch/transformers in bench) and send the ids.

Stopping rule (STOPPING_RULE, `completion_params`): greedy (temperature 0), exactly --max-new-tokens
tokens per prompt (default MAX_NEW_TOKENS), EOS ignored. eval's target generation and bench's requests
both follow it, so a predicted and a measured accept length count the same steps.
"""

from __future__ import annotations

import json
from pathlib import Path

MAX_PROMPT_FILE = 64 << 20

PROMPT_FORMATS = ("chat", "raw")
DEFAULT_PROMPT_FORMAT = "chat"
MAX_NEW_TOKENS = 64
STOPPING_RULE = "greedy (temperature 0), exactly this many tokens per prompt, EOS ignored"

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


def prompt_format(value: str | None) -> str:
    """--prompt-format's value, case-insensitive; anything else raises PromptError."""
    fmt = (value or DEFAULT_PROMPT_FORMAT).strip().lower()
    if fmt not in PROMPT_FORMATS:
        raise PromptError(f"--prompt-format must be one of {', '.join(PROMPT_FORMATS)}, not {value!r}")
    return fmt


def completion_params(max_new: int) -> dict:
    """The stopping rule as an OpenAI /v1/completions request states it (vLLM and SGLang both take
    ignore_eos). eval's target generation (eval.run.run_target_batch) is the same rule in transformers
    terms: do_sample=False, min_new_tokens = max_new_tokens, eos_token_id=None."""
    return {"max_tokens": max_new, "temperature": 0.0, "ignore_eos": True}


def tokenize_request(prompt: Prompt, fmt: str = DEFAULT_PROMPT_FORMAT) -> dict | None:
    """The body of a server /tokenize request that yields the ids `token_ids` gives for `prompt` (None for
    a token-id prompt: sent as it is). chat: the messages with the assistant header and no extra special
    tokens, as transformers' apply_chat_template(tokenize=True) encodes; raw: the text with the
    tokenizer's special tokens, as tokenizer(text) encodes. vLLM's /tokenize (TokenizeChatRequest,
    TokenizeCompletionRequest) and SGLang's /tokenize (TokenizeRequest) both read these fields."""
    if is_ids(prompt):
        return None
    if fmt == "raw":
        return {"prompt": text_of(prompt), "add_special_tokens": True}
    messages = prompt if isinstance(prompt, list) else [{"role": "user", "content": prompt}]
    return {"messages": messages, "add_generation_prompt": True, "add_special_tokens": False}


def token_ids(tokenizer, prompt: Prompt, fmt: str = DEFAULT_PROMPT_FORMAT) -> list[int]:
    """The prompt as the target reads it: ids as given; text or messages through the chat template when the
    tokenizer has one (fmt chat), plain tokenization otherwise (fmt raw, or no template); text of integers
    when there is no tokenizer."""
    if is_ids(prompt):
        return list(prompt)
    if tokenizer is None:
        try:
            return [int(x) for x in str(prompt).split()]
        except ValueError:
            raise PromptError("the target has no tokenizer: give prompts as token ids") from None
    messages = prompt if isinstance(prompt, list) else [{"role": "user", "content": prompt}]
    if fmt == "chat" and getattr(tokenizer, "chat_template", None):
        ids = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
        if isinstance(ids, dict) or hasattr(ids, "keys"):
            ids = ids["input_ids"]
        return list(ids)
    return list(tokenizer(text_of(prompt))["input_ids"])


def text_of(prompt: Prompt) -> str:
    """The prompt as raw text (what a plain completions request sends)."""
    if isinstance(prompt, str):
        return prompt
    if is_ids(prompt):
        raise PromptError("token-id prompts have no text to send to a server")
    return str(prompt[-1].get("content", "")) if isinstance(prompt[-1], dict) else str(prompt[-1])
