"""One tiny checkpoint per drafter family (EAGLE-3, P-EAGLE, DFlash, DFlash2, DSpark, EAGLE-1/2, Medusa, an MTP head
inside a target, a plain draft model) and every command a user runs on a drafter, for the family × command matrix
(tests/test_family_matrix.py): each pair answers (exit 0/1) or refuses in one line (exit 2), never an internal error.
Built from the family fixtures (numpy only); the plain draft model is header-only."""

from __future__ import annotations

import contextlib
import io
import shutil
import sys
from pathlib import Path

import dflash_fixtures as df
import eagle1_fixtures as e1
import medusa_fixtures as mf
import mtp_fixtures as mt
import zoo_fixtures as z
from conftest import SPEC_TRAIN, TINY_TARGET

from specbridge.checkpoint.write import write_header_only

FAMILIES = ("eagle3", "peagle", "dflash", "dflash2", "dspark", "eagle", "medusa", "mtp", "causal_lm")
V32 = "vllm==0.32.0"


def plain_draft(root: Path) -> Path:
    """A two-layer Llama of the tiny target's vocabulary (header-only): what vLLM's method draft_model serves."""
    import json

    root.mkdir(parents=True)
    cfg = json.loads((TINY_TARGET / "config.json").read_text()) | {"num_hidden_layers": 2}
    (root / "config.json").write_text(json.dumps(cfg))
    H, Iw, V = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    tensors = [("model.embed_tokens.weight", "F32", [V, H]), ("model.norm.weight", "F32", [H]), ("lm_head.weight", "F32", [V, H])]
    for i in range(2):
        p = f"model.layers.{i}."
        tensors += [(p + "input_layernorm.weight", "F32", [H]), (p + "post_attention_layernorm.weight", "F32", [H])]
        tensors += [(p + f"self_attn.{n}_proj.weight", "F32", [H, H]) for n in "qkvo"]
        tensors += [(p + f"mlp.{n}_proj.weight", "F32", [Iw, H]) for n in ("gate", "up")]
        tensors += [(p + "mlp.down_proj.weight", "F32", [H, Iw])]
    write_header_only(root / "model.safetensors", tensors)
    return root


def make(family: str, root: Path) -> Path:
    """The family's tiny checkpoint under `root`."""
    d = root / family
    if family == "eagle3":
        shutil.copytree(SPEC_TRAIN, d)
        return d
    if family == "causal_lm":
        return plain_draft(d)
    if family == "mtp":
        return mt.write_target(d, mt.glm_config())
    cfg, ts = {
        "peagle": lambda: (z.peagle_config(), z.peagle_tensors()),
        "dflash": lambda: (df.config(), df.tensors()),
        "dflash2": lambda: (df.config2(), df.tensors2()),
        "dspark": lambda: (df.config_dspark(), df.tensors_dspark()),
        "eagle": lambda: (e1.config(), e1.tensors()),
        "medusa": lambda: mf.cases()["vllm-names"],
    }[family]()
    return z.write(d, cfg, ts)


def commands(path: Path, out: Path) -> dict[str, list[str]]:
    """Every command a user runs on a drafter, by the matrix's column name."""
    t = str(TINY_TARGET)
    return {
        "inspect": ["inspect", str(path)],
        "check": ["check", str(path), "--engine", V32],
        "check --target": ["check", str(path), "--engine", V32, "--target", t],
        "launch": ["launch", str(path), "--engine", V32, "--target", t],
        "convert": ["convert", str(path), "--engine", V32, "-o", str(out / "converted")],
        "eval": ["eval", str(path), "--target", t, "--num-prompts", "1", "--max-new-tokens", "2"],
    }


def run_entry(argv: list[str]) -> tuple[int, str, str]:
    """The console entry point in this process (specbridge.cli.entry.main, as `specbridge ARGV` runs it):
    (exit code, stdout, stderr)."""
    from specbridge.cli.entry import main

    out, err = io.StringIO(), io.StringIO()
    old = sys.argv
    sys.argv = ["specbridge", *argv]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main()
                code = 0
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    finally:
        sys.argv = old
    return code, out.getvalue(), err.getvalue()


# what each command does for each family: "answer" (exit 0 or 1, the command's output) or "refuse" (exit 2, one line
# naming what the command does not do for the family). eval without torch refuses for every family (the ml extra);
# with torch it is measured by the ml tier, not here.
REFUSE = {
    ("peagle", "convert"),
    ("dflash2", "convert"),
    ("dspark", "convert"),
    ("medusa", "launch"),
    ("medusa", "convert"),
    ("medusa", "eval"),
    ("mtp", "launch"),  # the head is served from the target itself: --target is refused
    ("mtp", "convert"),
    ("mtp", "eval"),
    ("causal_lm", "inspect"),
    ("causal_lm", "check"),  # a draft model is checked against its target: without --target it is refused
    ("causal_lm", "convert"),
}
