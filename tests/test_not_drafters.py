"""Checkpoints that are no drafter (tests/not_drafter_fixtures.py, published shapes, header-only) are refused by every
command with exit 2 and one line naming what they are, and never get a finding: before, a timm ViT's blocks.N.* were
read as Medusa heads (an L001 / L006 error list), and a reward model with --target was checked as a plain draft model."""

from __future__ import annotations

import json

import not_drafter_fixtures as nd
import pytest
from family_matrix import commands, run_entry

from specbridge.families.detect import detect_family
from specbridge.view import open_view

COMMANDS = ("inspect", "check", "check --target", "launch", "convert", "eval")


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    root = tmp_path_factory.mktemp("not-drafters")
    return {name: mk(root / name) for name, (mk, _) in nd.CASES.items()}


@pytest.mark.parametrize("case", list(nd.CASES))
def test_every_command_refuses_it_in_one_line_naming_what_it_is(made, tmp_path, case):
    words = nd.CASES[case][1]
    for col in COMMANDS:
        code, out, err = run_entry(commands(made[case], tmp_path / col.replace(" ", "-"))[col])
        lines = err.strip().splitlines()
        assert code == 2 and out == "" and len(lines) == 1, (col, code, out, err)
        assert words in lines[0] and "drafter" in lines[0], (col, lines[0])
        assert not (tmp_path / col.replace(" ", "-") / "converted").exists()


@pytest.mark.parametrize("case", ["timm-vit", "mamba", "reward-model"])
def test_under_json_the_refusal_is_an_error_object_without_findings(made, case):
    code, out, _ = run_entry(["check", str(made[case]), "--engine", "vllm==0.32.0", "--json"])
    body = json.loads(out)
    assert code == 2 and body["ok"] is False and nd.CASES[case][1] in body["error"]["message"], body
    assert "findings" not in body and "results" not in body


def test_the_vit_is_no_medusa_head(made):
    """timm's blocks.N.attn.* is not medusa.py's blocks.N.layers.M + lm_heads.N: no family vote, and the verdict says
    what it is instead."""
    view = open_view(made["timm-vit"])
    assert view.verdict.family is None and view.verdict.candidates == [] and view.verdict.evidence == []
    assert view.verdict.not_drafter.startswith("a vision model (cls_token, pos_embed, patch_embed.proj.weight")


def test_a_medusa_head_needs_a_block_and_a_vocab_head_under_one_number():
    """One half of a Medusa head is no Medusa head: blocks.N.layers.M alone, or lm_heads.N alone, get no Medusa vote;
    both under the same number do (vLLM's names, FasterDecoding's and the HF model's)."""
    h = [64, 64]
    v = [512, 64]
    assert detect_family({}, {"blocks.0.layers.0.weight": h, "lm_heads.0.weight": v}).name == "medusa"
    assert detect_family({}, {"0.0.linear.weight": h, "0.0.linear.bias": [64], "0.1.weight": v}).name == "medusa"
    assert detect_family({}, {"medusa_head.0.0.linear.weight": h, "medusa_head.0.1.weight": v}).name == "medusa"
    assert detect_family({}, {"blocks.0.layers.0.weight": h}).name == "unknown"
    assert detect_family({}, {"blocks.0.layers.0.weight": h, "lm_heads.1.weight": v}).name == "unknown"
    assert detect_family({}, {"blocks.0.attn.qkv.weight": [192, 64], "head.weight": [1000, 64]}).name == "unknown"


def test_a_hybrid_target_with_attention_or_an_mtp_head_is_not_called_a_mamba_model():
    """State-space parts beside attention (Jamba, Qwen3-Next's linear attention) or beside an MTP head are a target's,
    read by the families that read targets; only a model of state-space blocks alone is refused as one."""
    ssm = {f"layers.0.mixer.{n}": [4] for n in ("A_log", "D", "conv1d.weight", "x_proj.weight", "dt_proj.weight")}
    assert detect_family({}, ssm).not_drafter.startswith("a state-space (Mamba) model")
    assert detect_family({}, ssm | {"layers.1.self_attn.q_proj.weight": [4, 4]}).not_drafter == ""
    assert detect_family({}, ssm | {"mtp.layers.0.eh_proj.weight": [4, 8]}).not_drafter == ""
