"""A generation part directory that survives Ctrl-C: what a worker generated is kept batch by batch, and a
rerun with the same arguments resumes after the last batch kept, writing the shards an uninterrupted run writes.

One part directory (selfdistill.generate_capture_part fills it, selfdistill.merge_parts reads the finished part):

    plan.json                   what the directory generates (a digest of the prompts' ids in batch order, batch
                                size, max new tokens, aux ids, eos/pad, shard size): another plan starts over
    batch-NNNNN.safetensors     one generated batch not yet in a shard (capture format, capture.write_shard)
    batch-NNNNN.json            its record: the batch's responses lines and response tokens, the file's byte size
    shard-NNNNN.safetensors     a shard, as an uninterrupted run writes it
    shard-NNNNN.json            its record: manifest entry, responses lines, response tokens, the batches it holds
    part.json, responses.jsonl  the finished part

Every file is written under a .tmp name, synced and renamed, and a record only after its data file, so a record
under its name means a whole data file of the recorded size. A resume reads the shard records in order, then the
batch records after the last shard's batches, each only while the next one is whole; everything else (a .tmp, a
data file without its record, a record whose file has another size, a batch a shard already holds) is removed.
A partial record is never read as whole."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from . import capture as cap

PLAN, PART, RESPONSES = "plan.json", "part.json", "responses.jsonl"


@dataclass
class PartProgress:
    """What a part directory holds so far: shards written, then batches kept but not yet in a shard."""

    out_dir: Path
    shards: list[dict] = field(default_factory=list)  # manifest entries of the shards written
    shard_lines: list[str] = field(default_factory=list)  # their responses.jsonl lines, in order
    shard_response_tokens: int = 0
    pending: list[dict] = field(default_factory=list)  # per-sequence capture rows of the kept batches
    pending_lines: list[str] = field(default_factory=list)
    pending_response_tokens: int = 0
    pending_batches: list[int] = field(default_factory=list)
    next_batch: int = 0
    kept_prompts: int = 0  # prompts whose data was found kept (a resume) or has been kept since

    @property
    def pending_tokens(self) -> int:
        return sum(row["input_ids"].shape[0] for row in self.pending)


def plan_of(batches: list[list[list[int]]], **settings) -> dict:
    """The identity of a part's work: the prompts' token ids in batch order and every setting that changes
    what is generated or how it is sharded. A kept batch is reused only under the same plan."""
    blob = json.dumps({"batches": batches, **settings, "format": cap.FORMAT}, sort_keys=True)
    return {"digest": hashlib.sha256(blob.encode()).hexdigest(), "batches": len(batches), "prompts": sum(map(len, batches))}


def write_json(path: Path, obj: dict) -> None:
    """A record under its name is whole: written beside, synced, renamed."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w") as f:
        f.write(json.dumps(obj))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _record(out_dir: Path, stem: str) -> dict | None:
    """The record `stem`.json when it and its data file are whole; None otherwise (absent, unreadable, or a data
    file of another size than the record says)."""
    try:
        record = json.loads((out_dir / f"{stem}.json").read_text())
        whole = (out_dir / f"{stem}.safetensors").stat().st_size == record["bytes"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return record if whole else None


def _scan(out_dir: Path, plan: dict) -> tuple[list[dict], list[dict]]:
    """The whole shard records in order, then the whole batch records that follow the shards' batches; both
    empty when the directory holds another plan (or none)."""
    try:
        if json.loads((out_dir / PLAN).read_text()) != plan:
            return [], []
    except (OSError, ValueError):
        return [], []
    shards: list[dict] = []
    while (record := _record(out_dir, f"shard-{len(shards):05d}")) is not None:
        shards.append(record)
    batches: list[dict] = []
    first = shards[-1]["batches_end"] if shards else 0
    while (record := _record(out_dir, f"batch-{first + len(batches):05d}")) is not None:
        batches.append(record)
    return shards, batches


def kept_prompts(out_dir: Path, plan: dict) -> int:
    """How many prompts' data a part directory keeps for this plan (read only)."""
    shards, batches = _scan(Path(out_dir), plan)
    return sum(s["entry"]["num_seqs"] for s in shards) + sum(b["num_seqs"] for b in batches)


def open_part(out_dir: Path, plan: dict) -> PartProgress:
    """A part directory ready to generate into: what a previous run kept under the same plan is loaded (the kept
    batches' rows back in memory, as they were before the interruption), everything else is removed."""
    out_dir = Path(out_dir)
    shards, batches = _scan(out_dir, plan)
    if not shards and not batches:
        shutil.rmtree(out_dir, ignore_errors=True)
        out_dir.mkdir(parents=True)
        write_json(out_dir / PLAN, plan)
        return PartProgress(out_dir)
    progress = PartProgress(out_dir)
    for s in shards:
        progress.shards.append(s["entry"])
        progress.shard_lines += s["responses"]
        progress.shard_response_tokens += s["response_tokens"]
    first = shards[-1]["batches_end"] if shards else 0
    for k, b in enumerate(batches):
        progress.pending += cap.read_packed(out_dir / f"batch-{first + k:05d}.safetensors")
        progress.pending_lines += b["responses"]
        progress.pending_response_tokens += b["response_tokens"]
        progress.pending_batches.append(first + k)
    progress.next_batch = first + len(batches)
    progress.kept_prompts = kept_prompts(out_dir, plan)
    keep = {PLAN} | {f"shard-{i:05d}.{x}" for i in range(len(shards)) for x in ("json", "safetensors")}
    keep |= {f"batch-{i:05d}.{x}" for i in progress.pending_batches for x in ("json", "safetensors")}
    for stray in out_dir.iterdir():
        if stray.name not in keep:
            stray.unlink() if not stray.is_dir() else shutil.rmtree(stray)
    return progress


def keep_batch(progress: PartProgress, rows: list[dict], lines: list[str], response_tokens: int) -> None:
    """One generated batch kept on disk (data, then record) and added to the rows waiting for a shard."""
    stem = f"batch-{progress.next_batch:05d}"
    entry = cap.write_shard(progress.out_dir, progress.next_batch, rows, prefix="batch")
    size = (progress.out_dir / entry["file"]).stat().st_size
    write_json(
        progress.out_dir / f"{stem}.json", {"bytes": size, "num_seqs": len(rows), "responses": lines, "response_tokens": response_tokens}
    )
    progress.pending += rows
    progress.pending_lines += lines
    progress.pending_response_tokens += response_tokens
    progress.pending_batches.append(progress.next_batch)
    progress.next_batch += 1
    progress.kept_prompts += len(rows)


def write_pending_shard(progress: PartProgress) -> None:
    """The kept batches become the next shard (data, then record); then their batch files go."""
    index = len(progress.shards)
    entry = cap.write_shard(progress.out_dir, index, progress.pending)
    record = {
        "bytes": (progress.out_dir / entry["file"]).stat().st_size,
        "entry": entry,
        "responses": progress.pending_lines,
        "response_tokens": progress.pending_response_tokens,
        "batches_end": progress.next_batch,
    }
    write_json(progress.out_dir / f"shard-{index:05d}.json", record)
    for b in progress.pending_batches:
        for x in ("json", "safetensors"):
            (progress.out_dir / f"batch-{b:05d}.{x}").unlink(missing_ok=True)
    progress.shards.append(entry)
    progress.shard_lines += progress.pending_lines
    progress.shard_response_tokens += progress.pending_response_tokens
    progress.pending, progress.pending_lines, progress.pending_response_tokens, progress.pending_batches = [], [], 0, []


def finish_part(progress: PartProgress, seconds: float) -> dict:
    """The finished part: responses.jsonl and part.json (what merge_parts reads), the records left for its rmtree."""
    (progress.out_dir / RESPONSES).write_text("".join(line + "\n" for line in progress.shard_lines))
    part = {"shards": progress.shards, "seconds": round(seconds, 1), "response_tokens": progress.shard_response_tokens}
    write_json(progress.out_dir / PART, part)
    return part
