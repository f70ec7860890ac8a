"""Greedy acceptance of a plain draft model (vLLM `method: draft_model`, SGLang `STANDALONE`), with the code that
measures every drafter: the target's greedy continuation once per batch (run.walk_batches), then the positions
an engine visits walked by acceptance.tree_walk, a chain being the tree of its prefixes.

A plain draft model sees only token ids: at a verify step with the sequence known up to index t+1 (row t of the
walk), it continues that prefix greedily for k tokens, as the engines' draft-model proposers do (the draft's own
KV cache over the verified tokens, then k single-token steps). Only the rows the walk visits are drafted."""

from __future__ import annotations

import torch

from .acceptance import PromptResult, tree_walk
from .run import EvalResult, TargetRun, walk_batches


@torch.no_grad()
def draft_chain(draft, ids: list[int], row: int, k: int) -> list[int]:
    """The draft's k greedy tokens after ids[: row + 2] (row t predicts positions t+2 … t+1+k)."""
    x = torch.tensor([ids[: row + 2]], device=draft.device)
    out = draft(x, use_cache=True)
    chain = []
    for j in range(k):
        tok = out.logits[0, -1].nan_to_num(nan=0.0).argmax()
        chain.append(int(tok))
        if j + 1 < k:
            key = "cache" if "cache" in out else "past_key_values"  # transformers' name for the KV cache, new or old
            out = draft(tok.view(1, 1), **{key: out[key]}, use_cache=True)
    return chain


def evaluate_draft_model(
    target,
    draft,
    prompts: list[list[int]],
    *,
    steps: int = 3,
    max_new: int = 64,
    eos_id: int | None = None,
    progress=None,
    batch_size: int = 8,
) -> EvalResult:
    """Mean accept length etc. of greedy speculative decoding with a plain draft model (chains of `steps` tokens)."""

    def walk(run: TargetRun) -> PromptResult:
        def chain_at(row: int) -> list[list[int]]:
            chain = draft_chain(draft, run.ids, row, steps)
            return [chain[: j + 1] for j in range(steps)]

        return tree_walk(chain_at, run.ids[run.prompt_len :], run.prompt_len, max_new, steps)

    return walk_batches(target, prompts, max_new + steps, set(), eos_id, batch_size, progress, walk)
