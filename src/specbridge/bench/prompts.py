"""Prompts for `specbridge bench` and `sweep`: a JSONL/text file, the bundled validation prompts
(specbridge/data/prompts/val.jsonl, eval's default too), or a small built-in set; and their token ids.

The ids come from the server under test (`server_token_ids`: its own /tokenize endpoint, with the
request specbridge.prompts.tokenize_request builds), and bench sends ids, never text. Why the server and
not a tokenizer here: bench stays light (no torch or transformers, and no copy of the target on the
benchmarking machine), and the chat template is rendered by the very engine being measured, the way it
renders chat requests; tests/test_workload.py proves the ids equal eval's (transformers'
apply_chat_template) on a real vLLM server. A server without /tokenize is refused with what to do."""

from __future__ import annotations

from pathlib import Path

from ..bundled import PROMPTS
from ..prompts import Prompt, PromptError, is_ids, read_prompts, tokenize_request

__all__ = ["BUILTIN", "PromptError", "REPO_VAL", "load_prompts", "server_token_ids"]

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


def load_prompts(path: str | Path | None = None) -> tuple[list[Prompt], str]:
    """(prompts as read, source): the file (read as eval and train read it), else the bundled validation
    prompts, else a small built-in set. Text, chat messages or token ids; `server_token_ids` makes ids."""
    if path is None:
        if REPO_VAL.is_file():
            try:
                return read_prompts(REPO_VAL), str(REPO_VAL)
            except PromptError:
                pass
        return list(BUILTIN), "built-in"
    return read_prompts(path), str(path)


def _no_template(answer) -> bool:
    """The server's /tokenize refused messages because the tokenizer has no chat template (vLLM:
    ChatTemplateResolutionError "... you must provide a chat template ..."; SGLang: "... chat template")."""
    text = str(answer).lower()
    return "chat template" in text or "chat_template" in text


async def server_token_ids(client, base: str, model: str, prompts: list[Prompt], fmt: str, timeout: float) -> tuple[list[list[int]], str]:
    """(each prompt's token ids as the server tokenizes it, a note). chat prompts through a server whose
    tokenizer has no chat template are tokenized as raw text, as eval does for such a target (said in the
    note). Raises ServerError when the server cannot tokenize."""
    from .client import ServerError, post_json

    out, fallback = [], False
    for p in prompts:
        if is_ids(p):
            out.append(list(p))
            continue
        body = tokenize_request(p, "raw" if fallback else fmt)
        status, answer = await post_json(client, f"{base}/tokenize", {"model": model, **body}, timeout)
        if status != 200 and fmt == "chat" and not fallback and _no_template(answer):
            fallback = True
            status, answer = await post_json(client, f"{base}/tokenize", {"model": model, **tokenize_request(p, "raw")}, timeout)
        if status == 404:
            raise ServerError(
                f"POST {base}/tokenize: HTTP 404: the server cannot tokenize, so bench cannot send the token ids eval "
                'measures; give the prompts as token ids ({"prompt_ids": [...]} per line)'
            )
        tokens = answer.get("tokens") if isinstance(answer, dict) else None
        if status != 200 or not isinstance(tokens, list) or not tokens or not all(type(t) is int for t in tokens):
            raise ServerError(f"POST {base}/tokenize: HTTP {status}: {str(answer)[:300]}")
        out.append(tokens)
    note = "the server's tokenizer has no chat template: prompts tokenized as raw text (as eval does)" if fallback else ""
    return out, note
