"""Self-distillation data in ONE target pass: greedy generation that captures as it decodes.

EAGLE-3 trains on the target's own answers and on the hidden states the target had while
writing them. Generating first and re-running the target to capture (the two-pass way in
`data.py` + `capture.py`) pays for every token twice; here the forward hooks that read the aux
states fire inside the KV-cached decode loop, so each token costs one target step.

* Rows that finish (eos or max_new_tokens) leave the batch and its KV cache at once, so a batch
  never keeps paying for finished answers.
* On CPU, N single-thread worker processes (`gen_workers`) beat one N-thread process
  (matmuls this small do not scale across threads; measured 52 tok/s per 1-thread process
  vs 78 tok/s for one 2-thread process on a 2-core machine). Each worker writes a part
  directory in the capture format; `merge_parts` joins them into one capture.

The output is the same "specbridge-capture/1" format as `capture.capture_to_disk` (see there),
plus `responses.jsonl` (prompt, prompt_ids, response_ids, text) for the vocab-map counts.
The last token of each sequence is never fed to the target (nothing trains on its states),
so its rows hold zeros, masked out by `loss_mask` like the trainer expects.
"""

from __future__ import annotations

import inspect
import json
import os
import shutil
import time
from pathlib import Path

import torch

from . import capture as cap

RESPONSES = "responses.jsonl"


class _Hooks:
    """Forward pre-hooks on the aux layers (input-of-layer ids) and on the lm_head input."""

    def __init__(self, model, aux_layer_ids: list[int]):
        layers, final_norm = cap.decoder_layers(model)
        self.got: dict = {}
        self.handles = []
        for lid in aux_layer_ids:
            module = layers[lid] if lid < len(layers) else final_norm
            self.handles.append(module.register_forward_pre_hook(self._grab(lid), with_kwargs=True))
        self.handles.append(
            model.get_output_embeddings().register_forward_pre_hook(lambda mod, args: self.got.__setitem__("final", args[0].detach()))
        )

    def _grab(self, lid):
        def hook(mod, args, kwargs):
            self.got[lid] = (args[0] if args else kwargs["hidden_states"]).detach()

        return hook

    def close(self):
        for h in self.handles:
            h.remove()


def _cache_kw(model) -> str:
    """transformers renamed `past_key_values` to `cache` (the old name warns, then goes in 5.40)."""
    return "cache" if "cache" in inspect.signature(type(model).forward).parameters else "past_key_values"


@torch.no_grad()
def generate_capture_batch(
    model, prompts: list[list[int]], aux_layer_ids: list[int], max_new_tokens: int, eos_ids: set[int], pad_id: int
) -> list[dict]:
    """Greedy-decode one left-padded batch; return, per prompt, the capture tensors of
    prompt + response and the response ids (eos kept, as the drafter must propose it)."""
    from transformers import DynamicCache

    B, W = len(prompts), max(len(p) for p in prompts)
    ids = torch.full((B, W), pad_id, dtype=torch.long)
    mask = torch.zeros((B, W), dtype=torch.long)
    for i, p in enumerate(prompts):
        ids[i, W - len(p) :] = torch.tensor(p)
        mask[i, W - len(p) :] = 1
    pos = (mask.cumsum(-1) - 1).clamp(min=0)
    hooks = _Hooks(model, aux_layer_ids)
    aux_steps: list[list[torch.Tensor]] = [[] for _ in range(B)]  # per row: [n, k*H] chunks
    fin_steps: list[list[torch.Tensor]] = [[] for _ in range(B)]
    responses: list[list[int]] = [[] for _ in range(B)]
    try:
        cache = DynamicCache()
        kv = {_cache_kw(model): cache}
        out = model(input_ids=ids, attention_mask=mask, position_ids=pos, use_cache=True, logits_to_keep=1, **kv)
        aux = torch.cat([hooks.got[lid] for lid in aux_layer_ids], dim=-1)
        for i, p in enumerate(prompts):
            aux_steps[i].append(aux[i, W - len(p) :].to(torch.bfloat16))
            fin = torch.zeros(len(p), aux.shape[-1] // len(aux_layer_ids), dtype=torch.bfloat16)
            fin[-1] = hooks.got["final"][i, -1].to(torch.bfloat16)  # prefill head sees the last position only
            fin_steps[i].append(fin)
        nxt = out.logits[:, -1].argmax(-1)
        alive = torch.arange(B)  # original row of each batch row still decoding
        for step in range(max_new_tokens):
            for r, i in enumerate(alive.tolist()):
                responses[i].append(int(nxt[r]))
            done = torch.tensor([nxt[r].item() in eos_ids or step == max_new_tokens - 1 for r in range(len(alive))])
            if done.all():
                break
            if done.any():  # finished rows leave the batch and the cache
                keep = torch.nonzero(~done, as_tuple=True)[0]
                cache.batch_select_indices(keep)
                alive, nxt, mask, pos = alive[keep], nxt[keep], mask[keep], pos[keep]
            mask = torch.cat([mask, torch.ones((len(alive), 1), dtype=torch.long)], dim=1)
            pos = pos[:, -1:] + 1
            out = model(input_ids=nxt[:, None], attention_mask=mask, position_ids=pos, use_cache=True, **kv)
            aux = torch.cat([hooks.got[lid] for lid in aux_layer_ids], dim=-1)
            for r, i in enumerate(alive.tolist()):
                aux_steps[i].append(aux[r, -1:].to(torch.bfloat16))
                fin_steps[i].append(hooks.got["final"][r, -1:].to(torch.bfloat16))
            nxt = out.logits[:, -1].argmax(-1)
    finally:
        hooks.close()
    rows = []
    for i, p in enumerate(prompts):
        seq = list(p) + responses[i]
        L = len(seq)
        a = torch.cat(aux_steps[i])
        f = torch.cat(fin_steps[i])
        pad = L - a.shape[0]  # the last token was never fed: zero rows, masked out below
        a = torch.cat([a, a.new_zeros(pad, a.shape[1])])
        f = torch.cat([f, f.new_zeros(pad, f.shape[1])])
        nxt_ids = torch.zeros(L, dtype=torch.int32)
        nxt_ids[len(p) - 1 : L - 1] = torch.tensor(responses[i], dtype=torch.int32)  # greedy: next = argmax
        loss = torch.zeros(L, dtype=torch.bool)
        loss[len(p) - 1 : L - 1] = True
        rows.append(
            {
                "input_ids": torch.tensor(seq, dtype=torch.int32),
                "loss_mask": loss,
                "aux_hidden": a,
                "final_hidden": f,
                "target_next": nxt_ids,
                "response_ids": responses[i],
            }
        )
    return rows


def generate_capture_part(
    model,
    tokenizer,
    prompts: list,
    prompt_ids: list[list[int]],
    out_dir: Path,
    aux_layer_ids: list[int],
    max_new_tokens: int,
    eos_ids: set[int],
    pad_id: int,
    batch_size: int,
    shard_tokens: int = 16384,
    progress=None,
) -> dict:
    """One worker's slice -> a part directory (capture shards + responses.jsonl)."""
    out_dir = Path(out_dir)
    if (out_dir / "part.json").exists():
        return json.loads((out_dir / "part.json").read_text())
    shutil.rmtree(out_dir, ignore_errors=True)
    out_dir.mkdir(parents=True)
    order = sorted(range(len(prompt_ids)), key=lambda i: len(prompt_ids[i]))  # little left padding
    shards, pending, resp_lines, response_tokens = [], [], [], 0
    t0 = time.time()
    for start in range(0, len(order), batch_size):
        idx = order[start : start + batch_size]
        got = generate_capture_batch(model, [prompt_ids[i] for i in idx], aux_layer_ids, max_new_tokens, eos_ids, pad_id)
        batch_tokens = 0
        for i, g in zip(idx, got):
            resp = g.pop("response_ids")
            batch_tokens += len(resp)
            text = tokenizer.decode(resp, skip_special_tokens=True) if tokenizer is not None else ""
            resp_lines.append(json.dumps({"prompt": prompts[i], "prompt_ids": prompt_ids[i], "response_ids": resp, "text": text}))
            pending.append(g)
        response_tokens += batch_tokens
        if sum(p["input_ids"].shape[0] for p in pending) >= shard_tokens:
            shards.append(cap.write_shard(out_dir, len(shards), pending))
            pending = []
        if progress is not None:
            progress(len(idx), batch_tokens)
    if pending:
        shards.append(cap.write_shard(out_dir, len(shards), pending))
    (out_dir / RESPONSES).write_text("".join(line + "\n" for line in resp_lines))
    part = {"shards": shards, "seconds": round(time.time() - t0, 1), "response_tokens": response_tokens}
    (out_dir / "part.json").write_text(json.dumps(part))
    return part


def merge_parts(parts: list[Path], out_dir: Path, manifest_base: dict, seconds: float) -> dict:
    """Join worker parts into one capture directory (files moved, not copied), atomically."""
    out_dir = Path(out_dir)
    tmp = out_dir.with_name(out_dir.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    shards, lines, response_tokens = [], [], 0
    for part_dir in parts:
        part = json.loads((part_dir / "part.json").read_text())
        response_tokens += part["response_tokens"]
        for s in part["shards"]:
            name = f"shard-{len(shards):05d}.safetensors"
            os.replace(part_dir / s["file"], tmp / name)
            shards.append({**s, "file": name})
        lines += (part_dir / RESPONSES).read_text().splitlines(keepends=True)
    (tmp / RESPONSES).write_text("".join(lines))
    manifest = cap.one_pass_manifest(shards, response_tokens, seconds, manifest_base)
    (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2))
    os.replace(tmp, out_dir)
    for part_dir in parts:
        shutil.rmtree(part_dir, ignore_errors=True)
    return manifest


def load_rows(capture_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (Path(capture_dir) / RESPONSES).read_text().splitlines()]


def _worker(job: dict) -> dict:
    """Process entry (spawned): one thread, own target copy, one slice of the prompts."""
    torch.set_num_threads(1)
    from ..model.target import load_target
    from .data import eos_and_pad

    model, tokenizer, _ = load_target(job["target"])
    eos_ids, pad_id = eos_and_pad(model, tokenizer)
    done = {"prompts": 0, "tokens": 0, "t0": time.time()}

    def progress(n, tokens):
        done["prompts"] += n
        done["tokens"] += tokens
        dt = time.time() - done["t0"]
        print(
            f"worker {job['worker']}: {done['prompts']}/{len(job['prompts'])} prompts, {done['tokens']} response "
            f"tokens, {dt:.0f}s ({done['tokens'] / max(dt, 1e-9):.1f} tok/s)",
            flush=True,
        )

    return generate_capture_part(
        model,
        tokenizer,
        job["prompts"],
        job["prompt_ids"],
        Path(job["out"]),
        job["aux"],
        job["max_new_tokens"],
        eos_ids,
        pad_id,
        job["batch_size"],
        progress=progress if job.get("verbose", True) else None,
    )


def build_capture(
    target_name: str,
    model,
    tokenizer,
    prompts: list,
    prompt_ids: list[list[int]],
    out_dir: Path,
    aux_layer_ids: list[int],
    max_new_tokens: int,
    batch_size: int,
    workers: int,
    manifest_base: dict,
    log=print,
) -> dict:
    """Cached: responses + capture for a prompt list, split over `workers` processes."""
    out_dir = Path(out_dir)
    if (out_dir / "manifest.json").exists():
        return cap.load_manifest(out_dir)
    workers = max(1, min(workers, len(prompts)))
    # interleaved slices keep the length mix (and so the work) even across workers
    jobs = [
        {
            "target": target_name,
            "prompts": prompts[w::workers],
            "prompt_ids": prompt_ids[w::workers],
            "out": str(out_dir.with_name(f"{out_dir.name}.part{w}")),
            "aux": list(aux_layer_ids),
            "max_new_tokens": max_new_tokens,
            "batch_size": batch_size,
            "worker": w,
        }
        for w in range(workers)
    ]
    t0 = time.time()
    if workers == 1:
        from .data import eos_and_pad

        eos_ids, pad_id = eos_and_pad(model, tokenizer)
        from tqdm.auto import tqdm

        with tqdm(total=len(prompts), desc=f"generate+capture {out_dir.name}", unit="prompt") as bar:
            generate_capture_part(
                model,
                tokenizer,
                prompts,
                prompt_ids,
                Path(jobs[0]["out"]),
                aux_layer_ids,
                max_new_tokens,
                eos_ids,
                pad_id,
                batch_size,
                progress=lambda n, t: bar.update(n),
            )
    else:
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        log(f"generate+capture {len(prompts)} prompts in {workers} worker processes (1 thread each)")
        with ProcessPoolExecutor(workers, mp_context=mp.get_context("spawn")) as pool:
            list(pool.map(_worker, jobs))
    wall = time.time() - t0
    manifest = merge_parts([Path(j["out"]) for j in jobs], out_dir, manifest_base, wall)
    log(
        f"generated+captured {manifest['num_loss_tokens']} response tokens ({manifest['num_tokens']} in all, "
        f"{manifest['num_seqs']} seqs) in {wall:.0f}s ({manifest['num_loss_tokens'] / max(wall, 1e-9):.1f} response tok/s)"
    )
    return manifest
