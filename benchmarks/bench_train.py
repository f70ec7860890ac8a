"""Training-side throughput: drafter TTT training vs the target's own forward, and capture.

All three run on the SAME token batch, so the ratio says how much a drafter training step
costs relative to just running the target over those tokens:

    target forward   : target(input_ids) under no_grad, logits included      (tokens/s)
    capture          : the same forward + aux/final hooks + greedy ids + bf16 copies (tokens/s)
    drafter training : TTT unroll (k steps) + loss + backward + AdamW step      (tokens/s)

and, on real prompts (the bundled validation set), data generation:

    generate         : greedy KV-cached decoding only (new tokens/s)
    generate+capture : the one-pass loop that also captures aux/final states (new tokens/s);
                       the ratio says what the capture costs on top of generation

Usage:  python benchmarks/bench_train.py [--target smollm2-135m] [--batch 8] [--seq 128]
        [--draft-vocab 8192] [--ttt-steps 3] [--repeats 3] [--threads 1] [--json out.json]
Reports the median of --repeats timed runs after one warm-up.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time


def timed(fn, repeats: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", default="smollm2-135m")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--draft-vocab", type=int, default=8192)
    ap.add_argument("--ttt-steps", type=int, default=3)
    ap.add_argument("--aux-layers", default=None, help="comma-separated; default [2, N//2, N-3]")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--gen-prompts", type=int, default=8, help="prompts for the generation rows (0: skip them)")
    ap.add_argument("--gen-tokens", type=int, default=32, help="new tokens per prompt for the generation rows")
    ap.add_argument("--json", default=None, help="also write the results here")
    args = ap.parse_args()

    import torch

    torch.set_num_threads(args.threads)
    from specbridge.model.drafter import DrafterConfig, Eagle3Drafter
    from specbridge.model.target import load_target, target_geometry
    from specbridge.train import capture as cap
    from specbridge.train.trainer import TTTObjective, collate
    from specbridge.train.vocab import build_vocab_map

    target, tok, path = load_target(args.target)
    geo = target_geometry(target)
    aux = [int(x) for x in args.aux_layers.split(",")] if args.aux_layers else cap.default_aux_layer_ids(geo["num_layers"])
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(0, geo["vocab_size"], (args.batch, args.seq), generator=g)
    n_tokens = ids.numel()

    def target_forward():
        with torch.no_grad():
            target(input_ids=ids)

    captured = {}

    def capture():
        captured["seqs"] = cap.capture_batch(target, ids.tolist(), aux)

    t_target = timed(target_forward, args.repeats)
    t_capture = timed(capture, args.repeats)

    seqs = []
    for row, got in zip(ids, captured["seqs"]):
        seqs.append({"input_ids": row.to(torch.int32), "loss_mask": torch.ones(args.seq, dtype=torch.bool), **got})
    batch = collate(seqs, torch.device("cpu"))
    vd = min(args.draft_vocab, geo["vocab_size"])
    d2t, t2d = build_vocab_map(torch.bincount(ids.flatten(), minlength=geo["vocab_size"]), vd)
    drafter = Eagle3Drafter(DrafterConfig.from_target(geo, vd, aux))
    drafter.set_vocab_map(d2t, t2d)
    drafter.init_from_target(target)
    objective = TTTObjective(drafter, target.get_output_embeddings().weight.detach()[t2d], args.ttt_steps, 0.8)
    opt = torch.optim.AdamW([p for p in drafter.parameters() if p.requires_grad], lr=1e-4)

    def train_step():
        loss, _ = objective(batch)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    t_train = timed(train_step, args.repeats)
    train_tokens = batch["input_ids"].numel()  # the drafter sees L-1 rows per sequence
    result = {
        "target": args.target,
        "target_path": str(path),
        "batch": args.batch,
        "seq": args.seq,
        "threads": args.threads,
        "draft_vocab": vd,
        "ttt_steps": args.ttt_steps,
        "aux_layers": aux,
        "target_forward_tok_s": round(n_tokens / t_target, 1),
        "capture_tok_s": round(n_tokens / t_capture, 1),
        "drafter_train_tok_s": round(train_tokens / t_train, 1),
        "train_over_target_forward": round((train_tokens / t_train) / (n_tokens / t_target), 3),
        "seconds": {"target_forward": round(t_target, 3), "capture": round(t_capture, 3), "train_step": round(t_train, 3)},
    }
    keys = ["target_forward_tok_s", "capture_tok_s", "drafter_train_tok_s", "train_over_target_forward"]
    if args.gen_prompts:
        from specbridge.bundled import PROMPTS as PROMPTS_DIR
        from specbridge.prompts import read_prompts as load_prompts
        from specbridge.prompts import token_ids as prompt_token_ids
        from specbridge.train import selfdistill
        from specbridge.train.data import eos_and_pad, generate_greedy

        prompts = [prompt_token_ids(tok, p) for p in load_prompts(PROMPTS_DIR / "val.jsonl", args.gen_prompts)]
        _, pad = eos_and_pad(target, tok)
        made = {}
        # no eos: every row decodes --gen-tokens tokens in both, so the token counts are equal
        t_gen = timed(
            lambda: made.__setitem__("g", generate_greedy(target, prompts, args.gen_tokens, set(), pad, batch_size=len(prompts))),
            args.repeats,
        )
        t_gencap = timed(
            lambda: made.__setitem__("c", selfdistill.generate_capture_batch(target, prompts, aux, args.gen_tokens, set(), pad)),
            args.repeats,
        )
        assert [r["response_ids"] for r in made["c"]] == made["g"], "one-pass responses differ from generate"
        new = len(prompts) * args.gen_tokens
        result.update(
            {
                "generate_tok_s": round(new / t_gen, 1),
                "generate_capture_tok_s": round(new / t_gencap, 1),
                "capture_overhead_on_generation": round(t_gencap / t_gen, 3),
            }
        )
        result["seconds"].update({"generate": round(t_gen, 3), "generate_capture": round(t_gencap, 3)})
        keys += ["generate_tok_s", "generate_capture_tok_s", "capture_overhead_on_generation"]
    for k in keys:
        print(f"{k:28s} {result[k]}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)
    return result


if __name__ == "__main__":
    main()
