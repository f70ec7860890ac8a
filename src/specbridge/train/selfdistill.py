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
import signal
import sys
import time
from pathlib import Path

import torch

from . import capture as cap
from . import parts

RESPONSES = parts.RESPONSES
SHARD_TOKENS = 16384  # sequence tokens per capture shard


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


def part_plan(prompt_ids: list[list[int]], aux_layer_ids, max_new_tokens: int, eos_ids, pad_id: int, batch_size: int, shard_tokens: int):
    """The batches one worker decodes (its prompts sorted by length: little left padding) and the plan that
    names them: a rerun resumes a part only under the same plan (parts.plan_of)."""
    order = sorted(range(len(prompt_ids)), key=lambda i: len(prompt_ids[i]))
    batches = [order[start : start + batch_size] for start in range(0, len(order), batch_size)]
    plan = parts.plan_of(
        [[prompt_ids[i] for i in idx] for idx in batches],
        aux=list(aux_layer_ids),
        max_new_tokens=max_new_tokens,
        eos=sorted(eos_ids),
        pad=pad_id,
        shard_tokens=shard_tokens,
    )
    return batches, plan


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
    shard_tokens: int = SHARD_TOKENS,
    progress=None,
) -> dict:
    """One worker's slice -> a part directory (capture shards + responses.jsonl). Every batch is kept on disk as
    it is decoded, so an interrupted run resumes after the last batch kept (parts.py); the batches and shards are
    those of an uninterrupted run."""
    out_dir = Path(out_dir)
    if (out_dir / parts.PART).exists():
        return json.loads((out_dir / parts.PART).read_text())
    batches, plan = part_plan(prompt_ids, aux_layer_ids, max_new_tokens, eos_ids, pad_id, batch_size, shard_tokens)
    state = parts.open_part(out_dir, plan)
    if progress is not None and state.kept_prompts:
        progress(state.kept_prompts, state.shard_response_tokens + state.pending_response_tokens)
    t0 = time.time()
    for idx in batches[state.next_batch :]:
        got = generate_capture_batch(model, [prompt_ids[i] for i in idx], aux_layer_ids, max_new_tokens, eos_ids, pad_id)
        lines, batch_tokens = [], 0
        for i, g in zip(idx, got):
            resp = g.pop("response_ids")
            batch_tokens += len(resp)
            text = tokenizer.decode(resp, skip_special_tokens=True) if tokenizer is not None else ""
            lines.append(json.dumps({"prompt": prompts[i], "prompt_ids": prompt_ids[i], "response_ids": resp, "text": text}))
        parts.keep_batch(state, got, lines, batch_tokens)
        if state.pending_tokens >= shard_tokens:
            parts.write_pending_shard(state)
        if progress is not None:
            progress(len(idx), batch_tokens)
    if state.pending:
        parts.write_pending_shard(state)
    return parts.finish_part(state, time.time() - t0)


def merge_parts(part_dirs: list[Path], out_dir: Path, manifest_base: dict, seconds: float) -> dict:
    """Join worker parts into one capture directory, atomically. Shards are hard-linked (copied where a link is
    refused), not moved: the parts stay whole until the capture is in place, so a merge interrupted anywhere is
    done again from them."""
    out_dir = Path(out_dir)
    tmp = out_dir.with_name(out_dir.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    shards, lines, response_tokens = [], [], 0
    for part_dir in part_dirs:
        part = json.loads((part_dir / "part.json").read_text())
        response_tokens += part["response_tokens"]
        for s in part["shards"]:
            name = f"shard-{len(shards):05d}.safetensors"
            _link_or_copy(part_dir / s["file"], tmp / name)
            shards.append({**s, "file": name})
        lines += (part_dir / RESPONSES).read_text().splitlines(keepends=True)
    (tmp / RESPONSES).write_text("".join(lines))
    manifest = cap.one_pass_manifest(shards, response_tokens, seconds, manifest_base)
    (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2))
    os.replace(tmp, out_dir)
    for part_dir in part_dirs:
        shutil.rmtree(part_dir, ignore_errors=True)
    return manifest


def _link_or_copy(src: Path, dst: Path) -> None:
    try:
        os.link(src, dst)
    except OSError:  # a filesystem without hard links
        shutil.copyfile(src, dst)


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


def _ignore_sigint() -> None:
    """Worker initializer: Ctrl-C reaches the whole process group, but the parent alone answers it (it stops the
    workers), so no worker prints a traceback of its own."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def run_workers(jobs: list[dict]) -> list[dict]:
    """Every job in its own spawned process. Interrupted, the workers are stopped at once: each keeps the batches
    it finished (parts.py), and one that dies mid-write leaves only files a resume removes."""
    import multiprocessing as mp

    pool = mp.get_context("spawn").Pool(len(jobs), initializer=_ignore_sigint)
    try:
        results = pool.map(_worker, jobs)
    except BaseException:
        pool.terminate()
        raise
    pool.close()
    pool.join()
    return results


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
        for stale in out_dir.parent.glob(f"{out_dir.name}.part*"):  # a merge interrupted after placing the capture
            shutil.rmtree(stale, ignore_errors=True)
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
    from .data import eos_and_pad

    eos_ids, pad_id = eos_and_pad(model, tokenizer)
    plans = [part_plan(j["prompt_ids"], aux_layer_ids, max_new_tokens, eos_ids, pad_id, batch_size, SHARD_TOKENS)[1] for j in jobs]
    reused = sum(parts.kept_prompts(Path(j["out"]), plan) for j, plan in zip(jobs, plans))
    if reused:
        sys.stderr.write(
            f"specbridge: resuming {out_dir.name}: the data of {reused} of {len(prompts)} prompts, kept by an interrupted run, is reused\n"
        )
    t0 = time.time()
    try:
        if workers == 1:
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
            log(f"generate+capture {len(prompts)} prompts in {workers} worker processes (1 thread each)")
            run_workers(jobs)
        wall = time.time() - t0
        manifest = merge_parts([Path(j["out"]) for j in jobs], out_dir, manifest_base, wall)
    except KeyboardInterrupt as interrupt:  # what is kept is said on the entry point's one line
        kept = sum(parts.kept_prompts(Path(j["out"]), plan) for j, plan in zip(jobs, plans))
        interrupt.specbridge_kept = (
            f"the data of {kept} of {len(prompts)} prompts is kept in {out_dir}.part*: the same command resumes from it"
        )
        raise
    log(
        f"generated+captured {manifest['num_loss_tokens']} response tokens ({manifest['num_tokens']} in all, "
        f"{manifest['num_seqs']} seqs) in {wall:.0f}s ({manifest['num_loss_tokens'] / max(wall, 1e-9):.1f} response tok/s)"
    )
    return manifest
