"""Capture the target's hidden states for drafter training, to disk, once.

Aux ids follow the input-of-layer convention (vLLM / speculators / EAGLE research): id i is the
residual stream ENTERING decoder layer i (= HF `hidden_states[i]`); i = N is the final pre-norm
state. We read them with forward pre-hooks on the layers (and on the final norm for i = N), so
the result does not depend on how a transformers version fills `hidden_states`.

On-disk format ("specbridge-capture/1"), one directory:

    manifest.json
        {"format": "specbridge-capture/1", "target": str, "target_path": str,
         "aux_layer_ids": [..], "num_layers": N, "hidden_size": Ht, "vocab_size": V,
         "num_seqs": int, "num_tokens": int, "source": str,
         "shards": [{"file": "shard-00000.safetensors", "num_seqs": n, "num_tokens": t,
                     "seq_lengths": [..]}, ...]}
    shard-XXXXX.safetensors   (sequences packed end to end)
        input_ids    int32 [t]          prompt + response tokens
        loss_mask    bool  [t]          True at p when token p+1 belongs to the response
        aux_hidden   bf16  [t, k*Ht]    cat of the k aux states, in aux_layer_ids order
        final_hidden bf16  [t, Ht]      input of the target's lm_head (after the final norm)
        target_next  int32 [t]          the target's greedy (argmax) next token at p
        seq_offsets  int64 [n+1]        sequence i is rows seq_offsets[i]:seq_offsets[i+1]

`final_hidden` lets the trainer rebuild target logits over any draft vocab (lm_head rows),
so a retrain with another --draft-vocab-size reuses the capture. Reading is shard by shard
(`iter_shards`), so training streams from disk instead of holding everything in memory.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import torch

FORMAT = "specbridge-capture/1"


def decoder_layers(model):
    inner = getattr(model, "model", model)
    return inner.layers, getattr(inner, "norm", None)


def default_aux_layer_ids(num_layers: int) -> list[int]:
    """EAGLE-3 default low/mid/high picks, input-of-layer convention: [2, N//2, N-3]
    (deduplicated and sorted, which only matters for toy targets with N < 6)."""
    return sorted({min(2, num_layers), num_layers // 2, max(num_layers - 3, 0)})


def check_aux_layer_ids(aux_layer_ids: list[int], num_layers: int) -> list[int]:
    ids = [int(i) for i in aux_layer_ids]
    if len(set(ids)) != len(ids) or not ids:
        raise ValueError(f"aux layer ids must be distinct and non-empty, got {ids}")
    bad = [i for i in ids if not 0 <= i <= num_layers]
    if bad:
        raise ValueError(f"aux layer ids {bad} outside [0, {num_layers}] (input-of-layer convention; {num_layers} = final pre-norm state)")
    return ids


@torch.no_grad()
def capture_batch(model, sequences: list[list[int]], aux_layer_ids: list[int], pad_id: int = 0):
    """Run one right-padded batch; return per-sequence dicts of aux/final/target_next tensors."""
    layers, final_norm = decoder_layers(model)
    n = len(layers)
    grabbed: dict[int, torch.Tensor] = {}
    hooks = []
    for lid in aux_layer_ids:
        if not 0 <= lid <= n:
            raise ValueError(f"aux layer id {lid} outside [0, {n}] for a {n}-layer target")
        module = layers[lid] if lid < n else final_norm

        def pre_hook(mod, args, kwargs, lid=lid):
            grabbed[lid] = (args[0] if args else kwargs["hidden_states"]).detach()

        hooks.append(module.register_forward_pre_hook(pre_hook, with_kwargs=True))
    head = model.get_output_embeddings()

    def head_hook(mod, args):
        grabbed["final"] = args[0].detach()

    hooks.append(head.register_forward_pre_hook(head_hook))
    try:
        width = max(len(s) for s in sequences)
        ids = torch.full((len(sequences), width), pad_id, dtype=torch.long)
        mask = torch.zeros((len(sequences), width), dtype=torch.long)
        for i, s in enumerate(sequences):
            ids[i, : len(s)] = torch.tensor(s)
            mask[i, : len(s)] = 1
        logits = model(input_ids=ids, attention_mask=mask, logits_to_keep=0).logits
        greedy = logits.argmax(-1)
    finally:
        for h in hooks:
            h.remove()
    aux = torch.cat([grabbed[lid] for lid in aux_layer_ids], dim=-1)
    out = []
    for i, s in enumerate(sequences):
        L = len(s)
        out.append(
            {
                "aux_hidden": aux[i, :L].to(torch.bfloat16),
                "final_hidden": grabbed["final"][i, :L].to(torch.bfloat16),
                "target_next": greedy[i, :L].to(torch.int32),
            }
        )
    return out


SEQ_KEYS = ("input_ids", "loss_mask", "aux_hidden", "final_hidden", "target_next")


def write_shard(out_dir: Path, index: int, seqs: list[dict], prefix: str = "shard") -> dict:
    """Pack per-sequence capture dicts end to end into {prefix}-{index}; return its manifest entry. Written
    beside, synced, then renamed: a file under its name is whole even after a Ctrl-C or a crash mid-write."""
    from safetensors.torch import save_file

    offsets = [0]
    for q in seqs:
        offsets.append(offsets[-1] + q["input_ids"].shape[0])
    tensors = {k: torch.cat([q[k] for q in seqs]).contiguous() for k in SEQ_KEYS}
    tensors["seq_offsets"] = torch.tensor(offsets, dtype=torch.int64)
    name = f"{prefix}-{index:05d}.safetensors"
    final = Path(out_dir) / name
    tmp = final.with_name(final.name + ".tmp")
    save_file(tensors, str(tmp))
    fsync_file(tmp)
    os.replace(tmp, final)
    return {
        "file": name,
        "num_seqs": len(seqs),
        "num_tokens": offsets[-1],
        "seq_lengths": [b - a for a, b in zip(offsets[:-1], offsets[1:])],
    }


def read_packed(path: str | Path) -> list[dict]:
    """The per-sequence dicts of one file `write_shard` wrote (a shard, or a batch kept for a resume)."""
    from safetensors.torch import load_file

    t = load_file(str(path))
    off = t["seq_offsets"].tolist()
    return [{k: t[k][a:b] for k in SEQ_KEYS} for a, b in zip(off[:-1], off[1:])]


def fsync_file(path: Path) -> None:
    """Flush a file's bytes to disk before it is renamed into place (a rename alone can outlive the data)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def one_pass_manifest(shards: list[dict], response_tokens: int, seconds: float, base: dict, **extra) -> dict:
    """The manifest of a capture made in the generation pass itself (selfdistill's workers, vLLM's engine): the
    counts come from the shards written, the rest from the caller's base and extra fields."""
    lengths = [n for s in shards for n in s["seq_lengths"]]
    return {
        "format": FORMAT,
        **base,
        "num_seqs": len(lengths),
        "num_tokens": sum(lengths),
        "num_loss_tokens": response_tokens,
        "capture_seconds": round(seconds, 1),
        "generated_and_captured_in_one_pass": True,
        **extra,
        "shards": shards,
    }


def capture_to_disk(
    model,
    rows: list[dict],
    out_dir: str | Path,
    aux_layer_ids: list[int],
    target_name: str,
    target_path: str,
    batch_size: int = 8,
    max_length: int = 512,
    shard_tokens: int = 16384,
    source: str = "",
    log=print,
) -> dict:
    """rows: [{prompt_ids, response_ids}] -> capture dir (see module docstring). Returns manifest."""
    from tqdm.auto import tqdm

    out = Path(out_dir)
    if (out / "manifest.json").exists():
        return json.loads((out / "manifest.json").read_text())
    tmp = out.with_name(out.name + ".partial")
    tmp.mkdir(parents=True, exist_ok=True)
    seqs, masks = [], []
    for r in rows:
        s = (list(r["prompt_ids"]) + list(r["response_ids"]))[:max_length]
        m = [False] * len(s)
        for p in range(len(r["prompt_ids"]) - 1, len(s) - 1):
            if p >= 0:
                m[p] = True
        seqs.append(s)
        masks.append(m)
    order = sorted(range(len(seqs)), key=lambda i: len(seqs[i]))  # similar lengths -> little padding
    shards, pending, pending_tokens = [], [], 0
    t0 = time.time()

    def flush():
        nonlocal pending, pending_tokens
        if pending:
            shards.append(write_shard(tmp, len(shards), pending))
        pending, pending_tokens = [], 0

    with tqdm(total=sum(len(s) for s in seqs), desc=f"capture {out.name}", unit="tok") as bar:
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            got = capture_batch(model, [seqs[i] for i in idx], aux_layer_ids)
            for i, g in zip(idx, got):
                g["input_ids"] = torch.tensor(seqs[i], dtype=torch.int32)
                g["loss_mask"] = torch.tensor(masks[i], dtype=torch.bool)
                pending.append(g)
                pending_tokens += len(seqs[i])
                bar.update(len(seqs[i]))
            if pending_tokens >= shard_tokens:
                flush()
        flush()
    layers, _ = decoder_layers(model)
    manifest = {
        "format": FORMAT,
        "target": target_name,
        "target_path": str(target_path),
        "aux_layer_ids": list(aux_layer_ids),
        "num_layers": len(layers),
        "hidden_size": model.config.hidden_size,
        "vocab_size": model.config.vocab_size,
        "num_seqs": len(seqs),
        "num_tokens": sum(len(s) for s in seqs),
        "num_loss_tokens": sum(sum(m) for m in masks),
        "source": source,
        "capture_seconds": round(time.time() - t0, 1),
        "shards": shards,
    }
    (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2))
    tmp.rename(out)
    log(f"captured {manifest['num_tokens']} tokens ({manifest['num_seqs']} seqs) in {manifest['capture_seconds']}s")
    return manifest


def load_manifest(capture_dir: str | Path) -> dict:
    manifest = json.loads((Path(capture_dir) / "manifest.json").read_text())
    if manifest.get("format") != FORMAT:
        raise ValueError(f"{capture_dir}: not a {FORMAT} capture")
    return manifest


def iter_shards(capture_dir: str | Path, order: list[int] | None = None):
    """Yield (shard_index, list of per-sequence dicts) one shard at a time (streaming)."""
    manifest = load_manifest(capture_dir)
    for si in order if order is not None else range(len(manifest["shards"])):
        yield si, read_packed(Path(capture_dir) / manifest["shards"][si]["file"])


def token_counts(rows: list[dict], vocab_size: int) -> torch.Tensor:
    """Frequency of every target id over the RESPONSE tokens (what the drafter must propose)."""
    counts = torch.zeros(vocab_size, dtype=torch.long)
    for r in rows:
        if r["response_ids"]:
            counts += torch.bincount(torch.tensor(r["response_ids"]), minlength=vocab_size)[:vocab_size]
    return counts
