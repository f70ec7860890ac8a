"""Offline acceptance: the target's greedy continuation and hidden states in one generation pass per
prompt, every position drafted in parallel, then the exact decode walk (chain or tree)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import torch

from ..bundled import PROMPTS
from ..model.drafter import Eagle3Drafter, KVCache
from ..prompts import DEFAULT_PROMPT_FORMAT, read_prompts, token_ids
from ..train.capture import decoder_layers
from .acceptance import PromptResult, Summary, chain_walk, summarise, tree_walk

# the boundary of the target's last hidden state after its final norm (what the model returns): EAGLE-1/2's feature
FINAL = -1


@dataclass
class TargetRun:
    ids: list[int]  # prompt + greedy continuation
    prompt_len: int
    states: dict[int, torch.Tensor]  # boundary -> [T, Ht] (input of layer b; b = N: before the final norm; FINAL: after it)


def aux_hooks(model, boundaries, on_state):
    """Forward hooks that hand every fed batch's state at each boundary b to on_state(b, [B, T, H]):
    layer b's input, the final norm's input for b = N, its output for b = FINAL. Returns the handles to remove."""
    layers, norm = decoder_layers(model)

    def hook(b):
        def grab(m, args, kwargs):
            on_state(b, (args[0] if args else kwargs["hidden_states"]).detach().float())

        return grab

    def grab_out(m, args, output):
        on_state(FINAL, (output[0] if isinstance(output, tuple) else output).detach().float())

    return [
        norm.register_forward_hook(grab_out)
        if b == FINAL
        else (layers[b] if b < len(layers) else norm).register_forward_pre_hook(hook(b), with_kwargs=True)
        for b in sorted(boundaries)
    ]


@torch.no_grad()
def run_target_batch(model, prompts: list[list[int]], new_tokens: int, boundaries: set[int], pad_id: int = 0) -> list[TargetRun]:
    """Greedy generation for several prompts at once (left padding; CPUs and GPUs both run batches
    far faster than one sequence at a time), keeping every sequence's aux states. The stopping rule
    of specbridge.prompts (completion_params): greedy, exactly `new_tokens`, EOS ignored."""
    store: dict[int, list] = {b: [] for b in boundaries}
    handles = aux_hooks(model, boundaries, lambda b, t: store[b].append(t))
    width = max(len(p) for p in prompts)
    ids = torch.full((len(prompts), width), pad_id, dtype=torch.long)
    mask = torch.zeros_like(ids)
    for i, p in enumerate(prompts):
        ids[i, width - len(p) :] = torch.tensor(p)
        mask[i, width - len(p) :] = 1
    try:
        out = model.generate(
            ids.to(model.device),
            attention_mask=mask.to(model.device),
            max_new_tokens=new_tokens,
            min_new_tokens=new_tokens,
            do_sample=False,
            pad_token_id=pad_id,
            eos_token_id=None,
        )
    finally:
        for h in handles:
            h.remove()
    full = {b: torch.cat(v, 1) for b, v in store.items()}
    runs = []
    for i, p in enumerate(prompts):
        pad = width - len(p)
        runs.append(TargetRun(out[i, pad:].tolist(), len(p), {b: full[b][i, pad:] for b in boundaries}))
    return runs


@torch.no_grad()
def draft_chains(drafter: Eagle3Drafter, run: TargetRun, boundaries: list[int], k: int, skip_fc: bool) -> torch.Tensor:
    """[T-1, k] target-vocab tokens each row's chain drafts, all rows at once (ttt_forward is exactly
    a cached chain: prefix keys from step 0, plus the row's own earlier steps)."""
    aux, ids = _row_inputs(drafter, run, boundaries)
    logits = drafter.ttt_forward(ids, aux, k, skip_fc=skip_fc)
    return torch.stack([_tokens(drafter, lg[0]) for lg in logits], -1)


@torch.no_grad()
def peagle_chains(
    drafter: Eagle3Drafter, run: TargetRun, boundaries: list[int], k: int, skip_fc: bool, pard_id: int, mask_hidden
) -> torch.Tensor:
    """[T-1, k] target-vocab tokens P-EAGLE drafts from each row in one parallel pass (model/peagle.py)."""
    from ..model.peagle import parallel_rows

    aux, ids = _row_inputs(drafter, run, boundaries)
    logits = parallel_rows(drafter, aux, ids, k, pard_id, mask_hidden.to(device=aux.device, dtype=aux.dtype), skip_fc)
    return torch.stack([_tokens(drafter, lg) for lg in logits], -1)


def _row_inputs(drafter: Eagle3Drafter, run: TargetRun, boundaries: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    """The concatenated aux states [1, n, k*Ht] (on the drafter's device, in its dtype: the target may
    run elsewhere) and the token after each position [1, n]."""
    n = min(v.shape[0] for v in run.states.values())
    w = drafter.fc.weight
    aux = torch.cat([run.states[b][:n] for b in boundaries], -1)[None].to(device=w.device, dtype=w.dtype)
    return aux, torch.tensor(run.ids[1 : n + 1], device=w.device)[None]


def _tokens(drafter: Eagle3Drafter, logits: torch.Tensor) -> torch.Tensor:
    """argmax → target id; rows computed from garbage (non-finite logits) draft -1, which no target token equals."""
    ids = drafter.draft_to_target(logits.nan_to_num(nan=0.0).argmax(-1))
    return torch.where(torch.isfinite(logits).all(-1), ids, torch.full_like(ids, -1))


def _log_probs(logits: torch.Tensor) -> torch.Tensor:
    """Scores of a tree node's children; garbage (NaN) logits score -1e9, so such paths are never kept as drafts."""
    return torch.log_softmax(logits.float(), -1).nan_to_num(nan=-1e9)


class TreeDrafter:
    """EAGLE/SGLang-style tree drafting at one row: expand the top-`topk` children of each frontier
    node for `steps` levels, keep the best `topk` by cumulative log-probability as the next
    frontier, then keep the best `budget - 1` nodes overall (the root token is the budget's +1).
    Every step is the drafter's own cached forward; a node's cache is step 0's keys up to its row
    plus its path's."""

    @torch.no_grad()
    def __init__(self, drafter: Eagle3Drafter, run: TargetRun, boundaries: list[int], steps: int, topk: int, budget: int, skip_fc: bool):
        self.d, self.steps, self.topk, self.budget = drafter, steps, topk, budget
        aux, ids = _row_inputs(drafter, run, boundaries)
        hidden0 = aux if skip_fc else drafter.fuse(aux)
        # step 0 over the whole sequence (causal), keeping the keys every later query attends to
        self.cache = KVCache()
        logits, hidden = drafter(ids, hidden0, torch.arange(ids.shape[1], device=ids.device)[None], kv_cache=self.cache)
        self.h0, self.logp0 = hidden[0], _log_probs(logits[0])

    @torch.no_grad()
    def __call__(self, row: int) -> list[list[int]]:
        d, dev = self.d, self.h0.device
        top = self.logp0[row].topk(self.topk)
        # node: (score, draft-vocab path, hidden out, KV cache of its path)
        prefix = self.cache.fork(row + 1)
        frontier = [(float(s), [int(t)], self.h0[row], prefix) for s, t in zip(top.values, top.indices)]
        nodes = [(s, p) for s, p, _, _ in frontier]
        for step in range(1, self.steps):
            cand = []
            for score, path, h, cache in frontier:
                tok = d.draft_to_target(torch.tensor([[path[-1]]], device=dev))
                own = cache.fork()
                logits, h2 = d(tok, h[None, None], torch.tensor([[row + step]], device=dev), kv_cache=own)
                lp = _log_probs(logits[0, 0]).topk(self.topk)
                for s, t in zip(lp.values, lp.indices):
                    cand.append((score + float(s), path + [int(t)], h2[0, 0], own))
            cand.sort(key=lambda c: -c[0])
            nodes += [(s, p) for s, p, _, _ in cand]
            frontier = cand[: self.topk]
        nodes.sort(key=lambda n: -n[0])
        keep = nodes[: self.budget - 1]
        # a path scored from garbage (NaN logits, mapped to -1e9) can never be accepted
        return [d.draft_to_target(torch.tensor(p, device=dev)).tolist() if s > -1e8 else [-1] * len(p) for s, p in keep]


@dataclass
class EvalResult:
    summary: Summary
    prompts: list[PromptResult]
    seconds: dict = field(default_factory=dict)

    def to_json(self, engine: dict | None, extra: dict | None = None) -> dict:
        s = self.summary
        return {
            "mean_accept_length": s.mean_accept_length,
            "per_position": s.per_position,
            "per_prompt": s.per_prompt,
            "num_prompts": s.num_prompts,
            "draft_acceptance_rate": s.draft_acceptance_rate,
            "drafts": s.drafts,
            "draft_tokens": s.draft_tokens,
            "accepted": s.accepted,
            "engine": engine,
            "seconds": self.seconds,
            **(extra or {}),
        }


def evaluate(
    target,
    drafter: Eagle3Drafter,
    prompts: list[list[int]],
    boundaries: list[int],
    *,
    steps: int = 3,
    topk: int = 1,
    draft_tokens: int | None = None,
    max_new: int = 64,
    skip_fc: bool = False,
    eos_id: int | None = None,
    progress=None,
    batch_size: int = 8,
    parallel: tuple[int, torch.Tensor] | None = None,
) -> EvalResult:
    """Mean accept length etc. of greedy speculative decoding with this drafter on these prompts. parallel:
    (pard token id, mask_hidden) for P-EAGLE's parallel drafting (all `steps` drafts in one pass; a chain)."""

    def walk(run: TargetRun) -> PromptResult:
        y = run.ids[run.prompt_len :]
        if parallel is not None:
            chains = peagle_chains(drafter, run, boundaries, steps, skip_fc, *parallel)
            return chain_walk(chains, y, run.prompt_len, max_new, steps)
        if topk == 1:
            chains = draft_chains(drafter, run, boundaries, steps, skip_fc)
            return chain_walk(chains, y, run.prompt_len, max_new, steps)
        budget = draft_tokens or steps * topk + 1
        tree = TreeDrafter(drafter, run, boundaries, steps, topk, budget, skip_fc)
        return tree_walk(tree, y, run.prompt_len, max_new, steps)

    return walk_batches(target, prompts, max_new + steps, set(boundaries), eos_id, batch_size, progress, walk)


def walk_batches(target, prompts: list[list[int]], new_tokens: int, boundaries: set[int], eos_id, batch_size: int, progress, walk):
    """What every drafter's eval shares: the target's greedy runs of `new_tokens` tokens, `batch_size` prompts at a
    time (run_target_batch), `walk(run)` → the prompt's PromptResult, the target's and the drafter's seconds."""
    t_target = t_draft = 0.0
    results = []
    for start in range(0, len(prompts), batch_size):
        t0 = time.perf_counter()
        runs = run_target_batch(target, prompts[start : start + batch_size], new_tokens, boundaries, eos_id or 0)
        t1 = time.perf_counter()
        for run in runs:
            results.append(walk(run))
            if progress:
                progress()
        t_target += t1 - t0
        t_draft += time.perf_counter() - t1
    return EvalResult(summarise(results), results, {"target": round(t_target, 3), "drafter": round(t_draft, 3)})


def load_prompts(path: Path | None, tokenizer, limit: int | None, fmt: str = DEFAULT_PROMPT_FORMAT) -> list[list[int]]:
    """Prompts as token ids (specbridge.prompts: the same reading and the same ids as bench and sweep);
    the bundled validation prompts by default."""
    return [token_ids(tokenizer, p, fmt) for p in read_prompts(path or PROMPTS / "val.jsonl", limit)]


@torch.no_grad()
def dflash_chains(drafter, run: TargetRun, boundaries: list[int], k: int, rows: range) -> torch.Tensor:
    """[n, k] target-vocab tokens the DFlash block drafts from each row in `rows` (-1 elsewhere): one block of
    k + 1 tokens per row (DSpark: k), all rows in one pass over the target's states (model/dflash.py draft_tokens:
    per-slot argmax, DFlash2's candidate-selector walk where it runs, or DSpark's Markov walk)."""
    n = min(v.shape[0] for v in run.states.values())
    w = drafter.embed_tokens.weight
    aux = torch.cat([run.states[b][:n] for b in boundaries], -1).to(device=w.device, dtype=w.dtype)
    ids = torch.tensor(run.ids, device=w.device)
    out = torch.full((n, k), -1, dtype=torch.long)
    want = torch.tensor([r for r in rows if 0 <= r < n and r + 1 < len(run.ids)], dtype=torch.long, device=w.device)
    if want.numel():
        tok = drafter.draft_tokens(aux, ids, want, k)
        out[want.cpu()] = torch.where(tok >= 0, drafter.draft_to_target(tok.clamp(min=0)), tok).cpu()
    return out


def evaluate_dflash(
    target,
    drafter,
    prompts: list[list[int]],
    boundaries: list[int],
    *,
    k: int,
    max_new: int = 64,
    eos_id=None,
    progress=None,
    batch_size: int = 8,
) -> EvalResult:
    """Greedy acceptance of a DFlash drafter drafting k tokens per verify step (the block is k + 1 long, as vLLM's
    DFlashProposer builds it: the verified token, then k mask tokens; DSpark's is k long from the verified token, then
    its Markov walk): one target pass per prompt, every visited row drafted at once, the same exact walk as EAGLE-3
    (acceptance.chain_walk)."""

    def walk(run: TargetRun) -> PromptResult:
        rows = range(run.prompt_len - 1, run.prompt_len + max_new - 2)  # the rows tree_walk can visit
        chains = dflash_chains(drafter, run, boundaries, k, rows)
        return chain_walk(chains, run.ids[run.prompt_len :], run.prompt_len, max_new, k)

    return walk_batches(target, prompts, max_new + k, set(boundaries), eos_id, batch_size, progress, walk)


@torch.no_grad()
def eagle1_chains(drafter, run: TargetRun, k: int) -> torch.Tensor:
    """[n, k] target-vocab tokens the EAGLE-1/2 chain drafts from each row (model/eagle1.py chain_rows: the target's
    last hidden state after its final norm and the token after it, then the drafter's own outputs)."""
    feature = run.states[FINAL]
    n = feature.shape[0]
    w = drafter.fc.weight
    ids = torch.tensor(run.ids[1 : n + 1], device=w.device)
    logits = drafter.chain_rows(feature[: ids.shape[0]].to(device=w.device, dtype=w.dtype), ids, k)
    return torch.stack([_tokens(drafter, lg) for lg in logits], -1).cpu()


def evaluate_eagle1(
    target, drafter, prompts: list[list[int]], *, k: int, max_new: int = 64, eos_id=None, progress=None, batch_size: int = 8
) -> EvalResult:
    """Greedy acceptance of an EAGLE-1/2 drafter drafting a chain of k tokens per verify step: one target pass per
    prompt (its final hidden states kept), every row's chain drafted at once, the exact walk (acceptance.chain_walk)."""

    def walk(run: TargetRun) -> PromptResult:
        return chain_walk(eagle1_chains(drafter, run, k), run.ids[run.prompt_len :], run.prompt_len, max_new, k)

    return walk_batches(target, prompts, max_new + k, {FINAL}, eos_id, batch_size, progress, walk)
