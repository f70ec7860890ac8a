"""The training loop: captured target states -> EAGLE-3 drafter, with TTT, DDP and resume.

Flow (`train(args)`): load target -> responses (cached) -> capture train/val (cached) ->
vocab map (fresh run) or checkpoint (resume) -> drafter init from target -> steps -> save.

Alignment, per captured sequence x[0..L-1] with aux states h[p], target head input f[p] and
target greedy next token n[p] (n[p] predicts x[p+1]): drafter row t gets token x[t+1] and
h[t]; at TTT step j its target is the target's prediction at position t+1+j, i.e. n[t+1+j]
and the distribution softmax(f[t+1+j] @ W_head[t2d]) (speculators' shift, then align_for_step).

Distributed: run under `torchrun --nproc-per-node N`; gloo on CPU, nccl on GPU. Rank 0
prepares data; every rank takes every N-th batch of the same deterministic plan.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from torch import nn

from ..model.drafter import DrafterConfig, Eagle3Drafter, count_trainable
from ..model.target import cache_root, load_target, target_geometry
from ..prompts import read_prompts, token_ids
from . import capture as cap
from . import capture_vllm, selfdistill
from .args import TrainArgs
from .data import build_or_load_responses, eos_and_pad
from .save import load_drafter, save_drafter
from .vocab import build_vocab_map, coverage


# ---- distributed helpers ------------------------------------------------------------------
def dist_info() -> tuple[int, int]:
    return int(os.environ.get("RANK", 0)), int(os.environ.get("WORLD_SIZE", 1))


def init_distributed(device: torch.device) -> tuple[int, int]:
    rank, world = dist_info()
    if world > 1 and not torch.distributed.is_initialized():
        import datetime

        backend = "nccl" if device.type == "cuda" else "gloo"
        torch.distributed.init_process_group(backend, timeout=datetime.timedelta(hours=3))
    return rank, world


def barrier():
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        torch.distributed.barrier()


# ---- batches ------------------------------------------------------------------------------
def epoch_plan(manifest: dict, batch_size: int, seed: int, epoch: int) -> list[tuple[int, list[int]]]:
    """Deterministic list of (shard, sequence indices) batches: shards in a seeded order,
    inside a shard similar lengths batched together, batch order shuffled."""
    rng = random.Random(seed * 1_000_003 + epoch)
    shard_order = list(range(len(manifest["shards"])))
    rng.shuffle(shard_order)
    plan = []
    for si in shard_order:
        lengths = manifest["shards"][si]["seq_lengths"]
        idx = sorted(range(len(lengths)), key=lambda i: (lengths[i], rng.random()))
        batches = [idx[i : i + batch_size] for i in range(0, len(idx), batch_size)]
        rng.shuffle(batches)
        plan.extend((si, b) for b in batches)
    return plan


def collate(seqs: list[dict], device: torch.device) -> dict:
    """Shift and right-pad captured sequences into drafter inputs and step targets."""
    T = max(s["input_ids"].shape[0] for s in seqs) - 1
    B = len(seqs)
    H = seqs[0]["final_hidden"].shape[1]
    K = seqs[0]["aux_hidden"].shape[1]
    batch = {
        "input_ids": torch.zeros(B, T, dtype=torch.long),
        "aux_hidden": torch.zeros(B, T, K, dtype=torch.float32),
        "target_final": torch.zeros(B, T, H, dtype=torch.float32),
        "target_next": torch.zeros(B, T, dtype=torch.long),
        "target_mask": torch.zeros(B, T, dtype=torch.bool),
    }
    for i, s in enumerate(seqs):
        L = s["input_ids"].shape[0] - 1
        batch["input_ids"][i, :L] = s["input_ids"][1:].long()
        batch["aux_hidden"][i, :L] = s["aux_hidden"][:-1].float()
        batch["target_final"][i, :L] = s["final_hidden"][1:].float()
        batch["target_next"][i, :L] = s["target_next"][1:].long()
        batch["target_mask"][i, :L] = s["loss_mask"][1:]
    return {k: v.to(device) for k, v in batch.items()}


# ---- loss and metrics ---------------------------------------------------------------------
class TTTObjective(nn.Module):
    """Wraps the drafter so DDP sees one forward: TTT unroll -> weighted loss + step metrics.

    Loss per step: cross-entropy of the draft distribution against the target's distribution
    restricted to the draft vocab (= KL up to a constant, as speculators' kl_div_loss).
    Metrics per step j (summed counts, so they add across batches and ranks):
      acc_j      : mapped draft argmax == target greedy token, among rows valid at step j
      full_acc_j : the same AND steps 0..j-1 of that chain were all correct (speculators' full_acc)
    """

    def __init__(
        self, drafter: Eagle3Drafter, target_head_rows: torch.Tensor, ttt_steps: int, step_decay: float, teacher_tokens: bool = False
    ):
        super().__init__()
        self.teacher_tokens = teacher_tokens  # training only: validation always feeds the drafter's own tokens
        self.drafter = drafter
        self.register_buffer("target_head_rows", target_head_rows.float(), persistent=False)
        self.ttt_steps = ttt_steps
        self.step_decay = step_decay

    def forward(self, batch: dict):
        step_logits = self.drafter.ttt_forward(
            batch["input_ids"], batch["aux_hidden"], self.ttt_steps, teacher_tokens=self.teacher_tokens and self.training
        )
        with torch.no_grad():
            target_probs = torch.softmax(batch["target_final"] @ self.target_head_rows.T, dim=-1)
        T = batch["input_ids"].shape[1]
        loss = batch["aux_hidden"].new_zeros(())
        stats = []
        chain_ok = torch.ones_like(batch["target_mask"])
        for j, logits in enumerate(step_logits):
            lg = logits[:, : T - j]
            mask = batch["target_mask"][:, j:]
            logp = torch.log_softmax(lg.float(), dim=-1)
            ce = -(target_probs[:, j:] * logp).sum(-1)
            n = mask.sum()
            loss = loss + (self.step_decay**j) * (ce * mask).sum() / n.clamp(min=1)
            with torch.no_grad():
                pred = self.drafter.draft_to_target(lg.argmax(-1))
                correct = (pred == batch["target_next"][:, j:]) & mask
                chain_ok = chain_ok[:, : T - j] & correct
                stats += [correct.sum(), chain_ok.sum(), n, (ce * mask).sum()]
        return loss, torch.stack([s.float() for s in stats])


def stats_to_metrics(stats: torch.Tensor, ttt_steps: int) -> dict:
    s = stats.view(ttt_steps, 4).tolist()
    m = {}
    for j, (correct, full, n, ce) in enumerate(s):
        m[f"acc_{j}"] = correct / max(n, 1)
        m[f"full_acc_{j}"] = full / max(n, 1)
        m[f"loss_{j}"] = ce / max(n, 1)
        m[f"tokens_{j}"] = int(n)
    return m


@torch.no_grad()
def evaluate(objective: TTTObjective, capture_dir: Path, batch_size: int, device: torch.device) -> dict:
    objective.eval()
    total = None
    for _, seqs in cap.iter_shards(capture_dir):
        for i in range(0, len(seqs), batch_size):
            _, stats = objective(collate(seqs[i : i + batch_size], device))
            total = stats if total is None else total + stats
    objective.train()
    return stats_to_metrics(total, objective.ttt_steps)


# ---- data preparation ---------------------------------------------------------------------
def prompt_files(spec: str) -> list[str]:
    """A prompts argument names one file or several, comma-separated (read in that order)."""
    return [f for f in (part.strip() for part in str(spec).split(",")) if f]


def data_key(args: TrainArgs, target_path: Path, prompts_spec: str, num_prompts, aux: list[int]) -> str:
    texts = [Path(f).read_text() for f in prompt_files(prompts_spec)]
    blob = json.dumps(
        [str(target_path), texts if len(texts) > 1 else texts[0], num_prompts, args.max_new_tokens, args.max_length, aux, cap.FORMAT]
        + (["one-pass"] if args.one_pass else [])
        + (["vllm"] if args.capture == "vllm" else [])
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def default_gen_workers() -> int:
    if torch.cuda.is_available():
        return 1
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


def prepare_data(args: TrainArgs, target, tokenizer, target_path: Path, aux: list[int], log) -> dict:
    """Responses + captures for train and val (each cached on disk). Returns paths and counts."""
    data_dir = Path(args.data_dir) if args.data_dir else cache_root() / "data"
    out = {}
    # --capture vllm keeps one engine for both splits; it stops when the block ends (training needs its memory)
    with capture_vllm.CaptureEngines() as engines:
        for split, prompts, num in (("train", args.train_prompts, args.num_prompts), ("val", args.val_prompts, args.num_val_prompts)):
            t0 = time.time()
            if args.one_pass:
                texts = [p for f in prompt_files(prompts) for p in read_prompts(f)][: num or None]
                ids = [token_ids(tokenizer, p) for p in texts]
                cdir = data_dir / f"gencap-{split}-{data_key(args, target_path, prompts, num, aux)}"
                base = {
                    "target": args.target,
                    "target_path": str(target_path),
                    "aux_layer_ids": list(aux),
                    "num_layers": target_geometry(target)["num_layers"],
                    "hidden_size": target.config.hidden_size,
                    "vocab_size": target.config.vocab_size,
                    "source": str(prompts),
                    "max_new_tokens": args.max_new_tokens,
                }
                if args.capture == "vllm":
                    eos_ids = eos_and_pad(target, tokenizer)[0]
                    manifest = capture_vllm.build_capture_vllm(
                        target_path,
                        texts,
                        ids,
                        cdir,
                        aux,
                        base["num_layers"],
                        args.max_new_tokens,
                        eos_ids,
                        base,
                        engines,
                        tp=args.tp,
                        pp=args.pp,
                        log=log,
                    )
                else:
                    manifest = selfdistill.build_capture(
                        args.target,
                        target,
                        tokenizer,
                        texts,
                        ids,
                        cdir,
                        aux,
                        args.max_new_tokens,
                        args.gen_batch_size,
                        args.gen_workers or default_gen_workers(),
                        base,
                        log=log,
                    )
                rows = selfdistill.load_rows(cdir)
                out[split] = {
                    "capture_dir": cdir,
                    "rows": rows,
                    "manifest": manifest,
                    "generate_s": None,
                    "capture_s": round(time.time() - t0, 1),
                    "one_pass": True,
                }
                continue
            files = prompt_files(prompts)
            if len(files) != 1:
                raise ValueError("the two-pass data path takes one prompts file; use one_pass for several")
            rows = build_or_load_responses(
                target, tokenizer, target_path, files[0], data_dir, num, args.max_new_tokens, args.gen_batch_size, log=log
            )
            gen_s = time.time() - t0
            t0 = time.time()
            cdir = data_dir / f"capture-{split}-{data_key(args, target_path, prompts, num, aux)}"
            manifest = cap.capture_to_disk(
                target, rows, cdir, aux, args.target, str(target_path), max_length=args.max_length, source=str(prompts), log=log
            )
            out[split] = {
                "capture_dir": cdir,
                "rows": rows,
                "manifest": manifest,
                "generate_s": round(gen_s, 1),
                "capture_s": round(time.time() - t0, 1),
            }
    return out


def aux_input_scale(capture_dir: Path, max_tokens: int = 65536) -> torch.Tensor:
    """1 / per-dimension RMS of the aux states over the first shards of the capture, leaving
    out each sequence's first token (its attention-sink values are ~100x the rest)."""
    total, n = None, 0
    for _, seqs in cap.iter_shards(capture_dir):
        for s in seqs:
            a = s["aux_hidden"][1:].float()
            total = a.pow(2).sum(0) if total is None else total + a.pow(2).sum(0)
            n += a.shape[0]
        if n >= max_tokens:
            break
    rms = (total / max(n, 1)).sqrt()
    return 1.0 / rms.clamp(min=1e-3)


# ---- checkpoints --------------------------------------------------------------------------
def checkpoint_dir(out: Path) -> Path:
    return out / "checkpoints"


def latest_checkpoint(out: Path) -> Path | None:
    steps = sorted(checkpoint_dir(out).glob("step-*/state.pt"))
    return steps[-1].parent if steps else None


def save_checkpoint(out: Path, drafter: Eagle3Drafter, optimizer, step: int, history: list, args: TrainArgs):
    d = checkpoint_dir(out) / f"step-{step:07d}"
    d.mkdir(parents=True, exist_ok=True)
    state = {
        "drafter": drafter.state_dict(),
        "drafter_config": drafter.cfg.to_dict(),
        "optimizer": optimizer.state_dict(),
        "step": step,
        "history": history,
        "args": asdict(args),
        "rng": torch.get_rng_state(),
    }
    torch.save(state, d / "state.pt.partial")
    os.replace(d / "state.pt.partial", d / "state.pt")
    return d


# ---- main ---------------------------------------------------------------------------------
def lr_at(step: int, total: int, args: TrainArgs) -> float:
    if step < args.warmup_steps:
        return args.lr * (step + 1) / args.warmup_steps
    progress = (step - args.warmup_steps) / max(1, total - args.warmup_steps)
    return args.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, progress))))


def train(args: TrainArgs, log=print) -> dict:
    """Data (target-generated, aux states captured), a drafter (new or resumed), train-time-test steps,
    then the saved drafter and its report. Under torchrun every rank runs this; rank 0 writes."""
    if args.threads:
        torch.set_num_threads(args.threads)
    wall0 = time.time()
    device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0))) if torch.cuda.is_available() else torch.device("cpu")
    rank, world = init_distributed(device)
    log = log if rank == 0 else (lambda *a, **k: None)
    torch.manual_seed(args.seed)
    target, tokenizer, target_path = rank0_first(rank, lambda: load_target(args.target))  # rank 0 materializes any cached target
    geo = target_geometry(target)
    aux = cap.check_aux_layer_ids(args.aux_layers or cap.default_aux_layer_ids(geo["num_layers"]), geo["num_layers"])
    t0 = time.time()
    data = rank0_first(rank, lambda: prepare_data(args, target, tokenizer, target_path, aux, log))  # the others only read the cache
    prep_s = time.time() - t0
    if args.prepare_only:
        return prepared_summary(data, prep_s, log)
    run = setup_run(args, data, geo, aux, target, device, rank, world, log)
    step, train_tokens, train_s = train_steps(run)
    report = {}
    if rank == 0:
        report = finish(run, step, train_tokens, train_s, target, target_path, prep_s, wall0)
    barrier()
    if world > 1 and torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()
    return report


def rank0_first(rank: int, make):
    """`make()` on rank 0, then (after a barrier) on the others: what rank 0 builds, they read from the cache."""
    value = make() if rank == 0 else None
    barrier()
    return value if rank == 0 else make()


def prepared_summary(data: dict, prep_s: float, log) -> dict:
    """What --prepare-only reports: the captured data per split."""
    summary = {
        split: {
            "capture_dir": str(d["capture_dir"]),
            "seqs": d["manifest"]["num_seqs"],
            "tokens": d["manifest"]["num_tokens"],
            "loss_tokens": d["manifest"]["num_loss_tokens"],
            "seconds": d["capture_s"],
        }
        for split, d in data.items()
    }
    log(json.dumps(summary, indent=2))
    return {"data": summary, "prepare_s": round(prep_s, 1)}


@dataclass
class Run:
    """One training run's parts, built once by `setup_run` and read by the loop and the report."""

    args: TrainArgs
    data: dict
    aux: list[int]
    cfg: DrafterConfig
    drafter: Eagle3Drafter
    objective: nn.Module  # the TTT loss on one batch
    model: nn.Module  # the objective, DDP-wrapped under torchrun
    optimizer: torch.optim.Optimizer
    params: list
    device: torch.device
    rank: int
    world: int
    log: object
    out: Path
    vocab_coverage: float
    start_step: int
    history: list
    total_steps: int
    batches_per_epoch: int


def new_or_resumed_drafter(args: TrainArgs, data: dict, geo: dict, aux: list[int], target, log) -> tuple[Eagle3Drafter, dict | None]:
    """A drafter from the latest checkpoint (vocab map included, never recomputed) or a new one: vocab map from
    the training tokens' frequencies, embedding, norm and head rows from the target."""
    out = Path(args.out)
    resume_from = latest_checkpoint(out) if args.resume else None
    if args.resume and resume_from is None:
        raise FileNotFoundError(f"--resume: no checkpoint under {checkpoint_dir(out)}")
    if resume_from is not None:
        # our own checkpoint, still loaded without executing pickled code (tensors, dicts, numbers only)
        state = torch.load(resume_from / "state.pt", map_location="cpu", weights_only=True)
        drafter = Eagle3Drafter(DrafterConfig(**state["drafter_config"]))
        drafter.load_state_dict(state["drafter"])
        log(f"resumed from {resume_from} (step {state['step']})")
        return drafter, state
    if args.init_from:
        return warm_started_drafter(args, data, aux, target, log), None
    counts = cap.token_counts(data["train"]["rows"], geo["vocab_size"])
    d2t, t2d = build_vocab_map(counts, min(args.draft_vocab_size, geo["vocab_size"]))
    drafter = Eagle3Drafter(DrafterConfig.from_target(geo, int(d2t.numel()), aux, norm_before_residual=args.norm_before_residual))
    drafter.set_vocab_map(d2t, t2d)
    drafter.init_from_target(target)
    if args.precondition_fc:
        drafter.fc_input_scale.copy_(aux_input_scale(data["train"]["capture_dir"]))
    return drafter, None


@torch.no_grad()
def warm_started_drafter(args: TrainArgs, data: dict, aux: list[int], target, log) -> Eagle3Drafter:
    """A saved drafter (its weights and vocab map, never recomputed) to train further on new data: what a
    later sitting does with the last one's result. Its fc is folded; with preconditioning the scale is
    measured on the new data and taken back out of fc.weight, so the drafter computes the same function."""
    drafter = load_drafter(args.init_from, target_model=target).train()
    if drafter.cfg.aux_layer_ids != list(aux):
        raise ValueError(f"--init-from {args.init_from}: aux layers {drafter.cfg.aux_layer_ids}, the data's {list(aux)}")
    if args.norm_before_residual != drafter.cfg.norm_before_residual:
        log(f"--init-from: keeping the drafter's norm_before_residual={drafter.cfg.norm_before_residual}")
    if args.precondition_fc:
        scale = aux_input_scale(data["train"]["capture_dir"])
        drafter.fc.weight.div_(scale)
        drafter.fc_input_scale.copy_(scale)
    log(f"warm start from {args.init_from} (draft vocab {drafter.cfg.draft_vocab_size}, its vocab map kept)")
    return drafter


def setup_run(args: TrainArgs, data: dict, geo: dict, aux: list[int], target, device, rank: int, world: int, log) -> Run:
    """Drafter, TTT objective (DDP under torchrun), optimizer (restored when resuming), the step budget, and the step-0 validation."""
    if args.ttt_inputs not in ("teacher", "own"):
        raise ValueError(f"ttt_inputs must be 'teacher' or 'own', got {args.ttt_inputs!r}")
    drafter, state = new_or_resumed_drafter(args, data, geo, aux, target, log)
    vocab_cov = coverage(cap.token_counts(data["train"]["rows"], geo["vocab_size"]), drafter.t2d)
    head_rows = target.get_output_embeddings().weight.detach()[drafter.t2d].clone()
    objective = TTTObjective(drafter, head_rows, args.ttt_steps, args.step_decay, teacher_tokens=args.ttt_inputs == "teacher").to(device)
    model = objective
    if world > 1:
        model = nn.parallel.DistributedDataParallel(objective, device_ids=[device.index] if device.type == "cuda" else None)
    params = [p for p in drafter.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=args.lr, betas=(0.9, 0.95), weight_decay=args.weight_decay)
    start_step, history = 0, []
    if state is not None:
        optimizer.load_state_dict(state["optimizer"])
        start_step, history = state["step"], state["history"]
    train_manifest = data["train"]["manifest"]
    batches_per_epoch = len(epoch_plan(train_manifest, args.batch_size, args.seed, 0)) // world
    total_steps = args.steps if args.steps else max(1, int(round(args.epochs * batches_per_epoch)))
    log(
        f"target {args.target} ({geo['num_layers']} layers, H={geo['hidden_size']}, V={geo['vocab_size']}); "
        f"aux {aux}; draft vocab {drafter.cfg.draft_vocab_size} covers {vocab_cov:.1%} of response tokens; "
        f"{count_trainable(drafter) / 1e6:.2f}M trainable; {train_manifest['num_seqs']} train seqs / "
        f"{train_manifest['num_tokens']} tokens; {total_steps} steps x {world} rank(s) x {args.batch_size} seqs"
    )
    run = Run(
        args,
        data,
        aux,
        drafter.cfg,
        drafter,
        objective,
        model,
        optimizer,
        params,
        device,
        rank,
        world,
        log,
        Path(args.out),
        vocab_cov,
        start_step,
        history,
        total_steps,
        batches_per_epoch,
    )
    if rank == 0 and start_step == 0:
        validate(run, 0, log)
    return run


def validate(run: Run, step: int, say) -> dict:
    """Validation accuracies at `step`, kept in the history and said."""
    m = evaluate(run.objective, run.data["val"]["capture_dir"], run.args.batch_size, run.device)
    run.history.append({"step": step, "val": m})
    say(f"val @{step}: " + " ".join(f"acc_{j}={m[f'acc_{j}']:.3f}" for j in range(run.args.ttt_steps)))
    return m


def train_steps(run: Run) -> tuple[int, int, float]:
    """The optimisation loop, resumable at any step: (last step, target tokens trained on, seconds)."""
    from tqdm.auto import tqdm

    args, step, train_tokens, t_train = run.args, run.start_step, 0, time.time()
    bar = tqdm(total=run.total_steps, initial=step, desc="train", unit="step", disable=(run.rank != 0 or not args.progress))
    epoch, pos = divmod(step, run.batches_per_epoch)
    while step < run.total_steps:
        plan = epoch_plan(run.data["train"]["manifest"], args.batch_size, args.seed, epoch)[: run.batches_per_epoch * run.world]
        mine = plan[run.rank :: run.world][pos:]
        pos = 0
        shard_cache: tuple[int, list] | None = None
        for si, idx in mine:
            if step >= run.total_steps:
                break
            if shard_cache is None or shard_cache[0] != si:
                shard_cache = next(cap.iter_shards(run.data["train"]["capture_dir"], [si]))
            batch = collate([shard_cache[1][i] for i in idx], run.device)
            loss, m = optimisation_step(run, batch, step)
            step += 1
            train_tokens += int(batch["target_mask"].sum())
            bar.set_postfix(loss=f"{loss:.3f}", acc0=f"{m['acc_0']:.2f}")
            bar.update(1)
            if run.rank == 0 and args.eval_every and step % args.eval_every == 0 and step < run.total_steps:
                validate(run, step, bar.write)
            if args.save_every and step % args.save_every == 0:
                if run.rank == 0:
                    save_checkpoint(run.out, run.drafter, run.optimizer, step, run.history, args)
                barrier()
        epoch += 1
    bar.close()
    return step, train_tokens, time.time() - t_train


def optimisation_step(run: Run, batch: dict, step: int) -> tuple[float, dict]:
    """One AdamW step on the TTT loss (learning rate from the schedule, gradients clipped): (loss, metrics)."""
    for g in run.optimizer.param_groups:
        g["lr"] = lr_at(step, run.total_steps, run.args)
    loss, stats = run.model(batch)
    run.optimizer.zero_grad(set_to_none=True)
    loss.backward()
    if run.args.grad_clip:
        torch.nn.utils.clip_grad_norm_(run.params, run.args.grad_clip)
    run.optimizer.step()
    return loss.item(), stats_to_metrics(stats, run.args.ttt_steps)


def finish(run: Run, step: int, train_tokens: int, train_s: float, target, target_path, prep_s: float, wall0: float) -> dict:
    """Rank 0: the final validation, the last checkpoint, the drafter in its layout, and training_report.json."""
    args, drafter = run.args, run.drafter
    vm = evaluate(run.objective, run.data["val"]["capture_dir"], args.batch_size, run.device)
    run.history.append({"step": step, "val": vm})
    run.log(
        "val @%d: " % step + " ".join(f"acc_{j}={vm[f'acc_{j}']:.3f} full_acc_{j}={vm[f'full_acc_{j}']:.3f}" for j in range(args.ttt_steps))
    )
    save_checkpoint(run.out, drafter, run.optimizer, step, run.history, args)
    save_drafter(
        drafter,
        run.out,
        args.layout,
        verifier_name_or_path=args.target,
        ttt_steps=args.ttt_steps,
        save_embeddings=args.save_embeddings,
        verifier_architectures=tuple(target.config.architectures or ["LlamaForCausalLM"]),
        bos_token_id=getattr(target.config, "bos_token_id", None),
        eos_token_id=getattr(target.config, "eos_token_id", None),
    )
    report = {
        "args": asdict(args),
        "world_size": run.world,
        "target_path": str(target_path),
        "aux_layer_ids": run.aux,
        "draft_vocab_size": run.cfg.draft_vocab_size,
        "vocab_coverage": run.vocab_coverage,
        "trainable_params": count_trainable(drafter),
        "data": {
            split: {
                "prompts": len(d["rows"]),
                "seqs": d["manifest"]["num_seqs"],
                "tokens": d["manifest"]["num_tokens"],
                "loss_tokens": d["manifest"]["num_loss_tokens"],
                "response_tokens": sum(len(r["response_ids"]) for r in d["rows"]),
                "generate_s": d["generate_s"],
                "capture_s": d["capture_s"],
                "generated_and_captured_s": d["manifest"].get("capture_seconds"),
                "capture_dir": str(d["capture_dir"]),
            }
            for split, d in run.data.items()
        },
        "steps": step,
        "resumed_from_step": run.start_step,
        "prepare_s": round(prep_s, 1),
        "train_s": round(train_s, 1),
        "train_tokens_per_s_rank0": round(train_tokens / max(train_s, 1e-9), 1),
        "wall_s": round(time.time() - wall0, 1),
        "history": run.history,
        "final_val": vm,
    }
    (run.out / "training_report.json").write_text(json.dumps(report, indent=2) + "\n")
    return report
