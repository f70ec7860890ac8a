"""Cost of `specbridge eval` against (a) one greedy generation by the target over the same prompts and
(b) a plain speculative-decoding loop (KV-cached target verification + cached drafter chain, token by
token, the way an engine runs it), all in one process and one run. Also checks (b) reaches the same
acceptance counts as eval.

    python benchmarks/bench_eval.py [--draft examples/smollm2-drafter] [--target smollm2-135m] [--prompts 10] [--new 64] [--k 3]

Goals: eval ≤ 1.5× generation; eval ≥ 3× faster than the plain loop.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import torch

from specbridge.eval.load import build_drafter
from specbridge.eval.run import aux_hooks, evaluate, load_prompts
from specbridge.model.drafter import KVCache
from specbridge.model.target import load_target
from specbridge.view import open_view

ROOT = Path(__file__).resolve().parents[1]


@torch.no_grad()
def generate_only(model, prompts, new):
    for ids in prompts:
        x = torch.tensor([ids])
        model.generate(x, attention_mask=torch.ones_like(x), max_new_tokens=new, min_new_tokens=new, do_sample=False, pad_token_id=0)


@torch.no_grad()
def plain_loop(model, drafter, prompts, boundaries, k, new):
    """Greedy speculative decoding, one verify step at a time, with KV caches on both models."""
    from transformers import DynamicCache

    grabbed = {}
    hs = aux_hooks(model, boundaries, lambda b, t: grabbed.__setitem__(b, t[0]))
    totals = [0, 0]
    try:
        for ids in prompts:
            cache = DynamicCache()
            out = model(torch.tensor([ids]), past_key_values=cache, use_cache=True)
            aux = torch.cat([grabbed[b] for b in boundaries], -1)  # rows 0..len-1
            seq = ids + [int(out.logits[0, -1].argmax())]
            dcache = KVCache()
            done = 0  # drafter rows already in its cache
            i = 1
            while i < new:
                P = len(seq) - 2
                # drafter: extend its cache with the newly verified rows, then chain k steps
                lg, h = drafter(
                    torch.tensor([seq[done + 1 : P + 2]]),
                    drafter.fuse(aux[None, done : P + 1]),
                    torch.arange(done, P + 1)[None],
                    kv_cache=dcache,
                )
                done = P + 1
                chain = [int(drafter.draft_to_target(lg[0, -1].argmax()))]
                hh = h[0, -1]
                for j in range(1, k):
                    lg2, h2 = drafter(torch.tensor([[chain[-1]]]), hh[None, None], torch.tensor([[P + j]]), kv_cache=dcache)
                    chain.append(int(drafter.draft_to_target(lg2[0, -1].argmax())))
                    hh = h2[0, -1]
                dcache.crop(done)
                # target: verify seq[-1] + chain in one forward
                out = model(torch.tensor([[seq[-1]] + chain]), past_key_values=cache, use_cache=True)
                pred = out.logits[0].argmax(-1).tolist()
                new_aux = torch.cat([grabbed[b] for b in boundaries], -1)
                a = 0
                while a < k and chain[a] == pred[a]:
                    a += 1
                seq += chain[:a] + [pred[a]]
                if k - a:
                    cache.crop(-(k - a))  # transformers 5: a negative count of tokens to drop
                aux = torch.cat([aux, new_aux[: 1 + a]], 0)
                totals[0] += 1
                totals[1] += a
                i += a + 1
    finally:
        for h in hs:
            h.remove()
    return totals


@torch.no_grad()
def plain_loop_nocache(model, drafter, prompts, boundaries, k, new):
    """The loop the equivalence tests use: every verify step recomputes the target over the whole
    sequence and the drafter over its whole prefix (simple, obviously right, slow)."""
    grabbed = {}
    hs = aux_hooks(model, boundaries, lambda b, t: grabbed.__setitem__(b, t[0]))
    totals = [0, 0]
    try:
        for ids in prompts:
            seq = ids + [int(model(torch.tensor([ids])).logits[0, -1].argmax())]
            i = 1
            while i < new:
                model(torch.tensor([seq]))
                aux = torch.cat([grabbed[b] for b in boundaries], -1)
                P = len(seq) - 2
                cache = KVCache()
                lg, h = drafter(torch.tensor([seq[1 : P + 2]]), drafter.fuse(aux[None, : P + 1]), torch.arange(P + 1)[None], kv_cache=cache)
                chain = [int(drafter.draft_to_target(lg[0, -1].argmax()))]
                hh = h[0, -1]
                for j in range(1, k):
                    lg2, h2 = drafter(torch.tensor([[chain[-1]]]), hh[None, None], torch.tensor([[P + j]]), kv_cache=cache)
                    chain.append(int(drafter.draft_to_target(lg2[0, -1].argmax())))
                    hh = h2[0, -1]
                pred = model(torch.tensor([seq + chain])).logits[0].argmax(-1).tolist()
                a = 0
                while a < k and chain[a] == pred[len(seq) - 1 + a]:
                    a += 1
                seq = seq + chain[:a] + [pred[len(seq) - 1 + a]]
                totals[0] += 1
                totals[1] += a
                i += a + 1
    finally:
        for h in hs:
            h.remove()
    return totals


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--draft", type=Path, default=ROOT / "examples" / "smollm2-drafter")
    ap.add_argument("--target", default="smollm2-135m")
    ap.add_argument("--prompts", type=int, default=10)
    ap.add_argument("--new", type=int, default=64)
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=1)
    a = ap.parse_args()
    torch.set_num_threads(1)
    model, tok, _ = load_target(a.target)
    prompts = load_prompts(None, tok, a.prompts)
    n_layers = model.config.get_text_config().num_hidden_layers
    built = build_drafter(open_view(a.draft), model, n_layers)
    times = {"generate": [], "eval": [], "plain loop": [], "no-cache loop": []}
    ev = pl = nc = None
    for _ in range(a.rounds):  # interleaved rounds: machine noise hits all three alike
        t = time.perf_counter()
        generate_only(model, prompts, a.new)
        times["generate"].append(time.perf_counter() - t)
        t = time.perf_counter()
        ev = evaluate(model, built.model, prompts, built.boundaries, steps=a.k, max_new=a.new)
        times["eval"].append(time.perf_counter() - t)
        t = time.perf_counter()
        pl = plain_loop(model, built.model, prompts, built.boundaries, a.k, a.new)
        times["plain loop"].append(time.perf_counter() - t)
        t = time.perf_counter()
        nc = plain_loop_nocache(model, built.model, prompts, built.boundaries, a.k, a.new)
        times["no-cache loop"].append(time.perf_counter() - t)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"{a.prompts} prompts × {a.new} new tokens, k={a.k}, target {a.target}, drafter {a.draft}")
    for k, v in med.items():
        print(f"  {k:12} {v:7.2f} s  (runs: {', '.join(f'{x:.2f}' for x in times[k])})")
    print(
        f"eval / generation          = {med['eval'] / med['generate']:.2f}×   (goal ≤ 1.5×; generation is one prompt at a time, eval batches)"
    )
    print(f"no-cache loop / eval       = {med['no-cache loop'] / med['eval']:.2f}×   (goal ≥ 3×; the plain loop of the tests)")
    print(
        f"KV-cached loop / eval      = {med['plain loop'] / med['eval']:.2f}×   (an engine-like loop: it already profits from speculation)"
    )
    print(
        f"eval: {ev.summary.drafts} drafts, {ev.summary.accepted} accepted, MAL {ev.summary.mean_accept_length:.3f}; "
        f"KV-cached loop: {pl[0]} / {pl[1]}, no-cache loop: {nc[0]} / {nc[1]} "
        f"{'(all same)' if (pl[0], pl[1]) == (nc[0], nc[1]) == (ev.summary.drafts, ev.summary.accepted) else '(DIFFERENT)'}"
    )


if __name__ == "__main__":
    main()
