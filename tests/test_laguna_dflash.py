"""vLLM's DFlash drafter for Laguna targets (vllm/model_executor/models/laguna_dflash.py DFlashLagunaForCausalLM,
0.25.0+): a tiny checkpoint written as its loader reads it, checked on the releases with the class and before it, and
the mutations the source says fail. Read from the wheels, not run (a Laguna target is needed to build it)."""

from __future__ import annotations

import json
from pathlib import Path

import dflash_fixtures as dfx
import numpy as np
import pytest
from conftest import run_cli

from specbridge.checkpoint.reader import open_checkpoint
from specbridge.families.detect import detect_family


def _check(path: Path, engine: str) -> tuple[int, dict[str, list[str]], dict]:
    r = run_cli("check", path, "--engine", engine, "--json")
    out = json.loads(r.stdout)
    codes: dict[str, list[str]] = {}
    for f in out["findings"]:
        codes.setdefault(f["code"], []).append(f["message"])
    return r.returncode, codes, out


def _errors(codes: dict[str, list[str]]) -> str:
    return " | ".join(m for ms in codes.values() for m in ms)


@pytest.fixture(scope="module")
def laguna(tmp_path_factory) -> Path:
    return dfx.write(tmp_path_factory.mktemp("laguna") / "d", dfx.config_laguna(), dfx.tensors_laguna())


def test_laguna_config_is_read_as_dflash(laguna):
    """architectures LagunaForCausalLM plus dflash_config: DFlash (vLLM renames it DFlashLagunaForCausalLM)."""
    c = open_checkpoint(laguna)
    assert detect_family(c.config, {n: t.shape for n, t in c.tensors.items()}, str(laguna)).name == "dflash"


@pytest.mark.parametrize("version", ["0.25.0", "0.32.0"])
def test_laguna_drafter_loads_where_the_class_ships(laguna, version):
    rc, codes, out = _check(laguna, f"vllm=={version}")
    assert rc == 0 and set(codes) == {"L009"}, codes  # embed_tokens and lm_head shared from the target, nothing else
    assert "DFlashLagunaForCausalLM" in json.dumps(out)


def test_laguna_before_its_first_release(laguna):
    rc, codes, _ = _check(laguna, "vllm==0.24.0")
    assert rc == 1 and any("'LagunaForCausalLM'" in m and "first release with one is 0.25.0" in m for m in codes["L005"]), codes


def test_laguna_mutations_fail_as_the_source_says(tmp_path):
    # Qwen3 DFlash's split q/k/v under the Laguna class: its plain params_dict loop has no stacking (KeyError)
    ts = dfx.tensors_laguna()
    for i in range(dfx.L):
        ts.pop(f"layers.{i}.self_attn.qkv_proj.weight")
        ts |= {f"layers.{i}.self_attn.{x}_proj.weight": ts["fc.weight"][: dfx.NH * dfx.HD, : dfx.H] for x in "qkv"}
    rc, codes, _ = _check(dfx.write(tmp_path / "split", dfx.config_laguna(), ts), "vllm==0.32.0")
    assert rc == 1 and any("KeyError: 'model.layers.0.self_attn.k_proj.weight'" in m for m in codes["L004"]), codes
    assert any("qkv_proj" in m for m in codes["L002"]), codes  # and the fused parameter stays random
    # no draft_vocab_size; layer_types mixing full and sliding attention
    cfg = dfx.config_laguna()
    del cfg["draft_vocab_size"]
    rc, codes, _ = _check(dfx.write(tmp_path / "novd", cfg, dfx.tensors_laguna()), "vllm==0.29.0")
    assert rc == 1 and "requires `draft_vocab_size`" in _errors(codes), codes
    cfg = dfx.config_laguna(layer_types=["full_attention", "sliding_attention"], sliding_window=64)
    rc, codes, _ = _check(dfx.write(tmp_path / "mixed", cfg, dfx.tensors_laguna()), "vllm==0.32.0")
    assert rc == 1 and "NotImplementedError: Laguna DFlash drafter requires a uniform" in _errors(codes), codes


def test_laguna_moe_layers_follow_each_releases_rule(tmp_path):
    """LagunaConfig defaults to 256 experts: 0.25–0.30 keep the layers in mlp_only_layers dense; from 0.31.0 only
    mlp_layer_types counts (Transformers' default: layer 0 dense, the rest sparse), so the same dense drafter's
    layer-1 MLP has no parameter there and its experts are never filled."""
    cfg = dfx.config_laguna(mlp_only_layers=[0, 1])
    del cfg["num_experts"], cfg["mlp_layer_types"]
    d = dfx.write(tmp_path / "moe", cfg, dfx.tensors_laguna())
    rc, codes, _ = _check(d, "vllm==0.29.0")
    assert rc == 0 and set(codes) == {"L009"}, codes
    rc, codes, _ = _check(d, "vllm==0.32.0")
    assert rc == 1 and any("KeyError: 'model.layers.1.mlp." in m for m in codes["L004"]), codes


def test_laguna_never_reads_a_mask_embedding_file(tmp_path):
    """The Laguna model's mask embedding is a zero buffer nobody fills: mask_embedding.pt beside it is lost."""
    from specbridge.checkpoint.maskfile import mask_file_bytes

    d = dfx.write(tmp_path / "mask", dfx.config_laguna(), dfx.tensors_laguna())
    (d / "mask_embedding.pt").write_bytes(mask_file_bytes("F32", (dfx.H,), np.full(dfx.H, 0.5, np.float32).tobytes(), dfx.MASK_ID))
    rc, codes, _ = _check(d, "vllm==0.32.0")
    assert rc == 1 and "mask_embedding.pt is never read by vllm 0.32.0" in _errors(codes), codes
    out = json.loads(run_cli("check", d, "--engine", "vllm==0.32.0", "--json").stdout)
    fixes = [f["fix"] for f in out["findings"] if "mask_embedding.pt is never read" in f["message"]]
    assert fixes and "no vllm release reads mask_embedding.pt for DFlashLagunaForCausalLM" in fixes[0], fixes


def test_qwen3_dflash_on_025_is_still_not_modelled(tmp_path):
    """0.25.0 builds DFlashLagunaForCausalLM with its own loader, DFlashDraftModel with the params_dict loop."""
    r = run_cli("check", dfx.write(tmp_path / "df", dfx.config(), dfx.tensors()), "--engine", "vllm==0.25.0")
    assert r.returncode == 2 and "from 0.26.0" in r.stderr, r.stderr


@pytest.mark.ml
def test_eval_refuses_laguna_layers_it_does_not_implement(laguna, tmp_path):
    """eval's block draft step implements Qwen3 DFlash layers: a Laguna drafter's fused qkv_proj, g_proj and aux norms
    have no slot there, so eval refuses instead of reporting the acceptance of layers left unfilled."""
    torch = pytest.importorskip("torch")
    from transformers import Qwen3Config, Qwen3ForCausalLM

    torch.manual_seed(0)
    cfg = Qwen3Config(
        vocab_size=dfx.V,
        hidden_size=dfx.H,
        num_hidden_layers=4,
        num_attention_heads=dfx.NH,
        num_key_value_heads=dfx.NKV,
        head_dim=dfx.HD,
        intermediate_size=dfx.I,
    )
    Qwen3ForCausalLM(cfg).save_pretrained(tmp_path / "target")
    prompts = tmp_path / "p.jsonl"
    prompts.write_text(json.dumps({"prompt_ids": [1, 2, 3, 4, 5, 6]}) + "\n")
    from typer.testing import CliRunner

    from specbridge.cli.contract import CliError
    from specbridge.cli.main import app

    # in this process (typer's runner: the refusal surfaces as the CliError the entry point turns into exit 2)
    r = CliRunner().invoke(app, ["eval", str(laguna), "--target", str(tmp_path / "target"), "--prompts", str(prompts), "--json"])
    e = r.exception
    assert isinstance(e, CliError) and e.code == 2, r.output
    assert "not the Qwen3 DFlash layers eval implements" in e.message and "aux_hidden_norms.0" in e.message, e.message
