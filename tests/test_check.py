"""check: every real producer fixture × every modelled engine era, the story, and one mutation per rule."""

from __future__ import annotations

import json

import pytest
from conftest import ALL_PRODUCERS, SF_HF, SF_SGLANG, SPEC_CONVERT, SPEC_TRAIN, STORY, mutate, run_cli

from specbridge.checkpoint.reader import open_checkpoint
from specbridge.engines.registry import ENGINES, newest_version, resolve
from specbridge.rules.check import check
from specbridge.view import open_view

DECODER = [
    "layers.0.hidden_norm.weight",
    "layers.0.input_layernorm.weight",
    "layers.0.mlp.down_proj.weight",
    "layers.0.mlp.gate_proj.weight",
    "layers.0.mlp.up_proj.weight",
    "layers.0.post_attention_layernorm.weight",
    "layers.0.self_attn.k_proj.weight",
    "layers.0.self_attn.o_proj.weight",
    "layers.0.self_attn.q_proj.weight",
    "layers.0.self_attn.v_proj.weight",
]


def one(path, engine):
    [res] = check(open_view(path), engine)
    return res


def codes(res, severity="error"):
    return {f.code for f in res.findings if f.severity == severity}


# --- the story ---------------------------------------------------------------------------------


def test_story_on_sglang_0_5_11_json_contract():
    r = run_cli("check", STORY, "--engine", "sglang==0.5.11", "--json")
    assert r.returncode == 1, r.stderr
    obj = json.loads(r.stdout)
    assert set(obj) >= {"ok", "engine", "layout", "load", "findings"}
    assert obj["ok"] is False
    assert obj["engine"] == {"name": "sglang", "version": "0.5.11"}
    assert set(obj["load"]) >= {"dropped", "ignored_by_design", "missing", "mismatched", "errors"}
    # "dropped" is what is silently lost: exactly the decoder; what the engine ignores on purpose is apart
    assert set(obj["load"]["dropped"]) == set(DECODER)
    assert set(obj["load"]["ignored_by_design"]) == {"t2d", "embed_tokens.weight"}
    assert obj["schema"].startswith("specbridge.check/") and obj["specbridge_version"]
    missing = obj["load"]["missing"]
    assert {m for m in missing if ".midlayer." in m} == {
        f"model.midlayer.{p}"
        for p in (
            "self_attn.qkv_proj.weight",
            "self_attn.o_proj.weight",
            "mlp.gate_up_proj.weight",
            "mlp.down_proj.weight",
            "input_layernorm.weight",
            "hidden_norm.weight",
            "post_attention_layernorm.weight",
        )
    }
    assert obj["load"]["mismatched"] == [] and obj["load"]["errors"] == []
    for f in obj["findings"]:
        assert set(f) == {"code", "severity", "message", "fix", "doc"}
        assert f["doc"].endswith(f"docs/rules.md#{f['code'].lower()}")
        assert f["severity"] in ("error", "warning", "info")
    errs = [f for f in obj["findings"] if f["severity"] == "error"]
    assert any("random initialisation" in f["message"] and "1.00" in f["message"] and f["fix"] for f in errs)


@pytest.mark.parametrize("engine", ["sglang==0.5.23", "vllm", "sglang==0.5.12"])
def test_story_loads_on_fixed_engines(engine):
    r = run_cli("check", STORY, "--engine", engine, "--json")
    obj = json.loads(r.stdout)
    assert r.returncode == 0 and obj["ok"] is True, obj["findings"]
    assert not set(DECODER) & set(obj["load"]["dropped"])
    assert obj["load"]["missing"] == []


def test_story_human_output_accounts_for_everything():
    r = run_cli("check", STORY, "--engine", "sglang==0.5.11", "--tables")
    assert r.returncode == 1
    for name in DECODER + ["fc.weight", "d2t", "t2d", "lm_head.weight", "norm.weight", "embed_tokens.weight"]:
        assert name in r.stdout
    assert "model.midlayer.self_attn.qkv_proj.weight" in r.stdout
    assert "L002" in r.stdout and "random initialisation" in r.stdout


# --- speculators config: vLLM ok, SGLang cannot dispatch and still shows the next problem ------


def test_speculators_train_save_on_vllm_ok():
    res = one(SPEC_TRAIN, "vllm")
    assert res.ok, res.findings
    assert res.report.config_view.startswith("speculators")
    assert res.report.ns["norm_before_fc"] is False


def test_speculators_train_save_on_sglang_0_5_11_dispatch_and_decoder():
    res = one(SPEC_TRAIN, "sglang==0.5.11")
    assert not res.ok
    assert {"L005", "L002"} <= codes(res)
    # 0.4.9+: an architecture SGLang has no class for falls back to Transformers, which has none either
    # (sglang/srt/model_loader/utils.py@0.5.11 resolve_transformers_arch)
    assert any("Cannot find model module" in e for e in res.report.errors)
    assert set(DECODER) <= set(res.report.dropped)


def test_speculators_on_current_sglang_only_dispatch():
    res = one(SPEC_TRAIN, "sglang")
    assert codes(res) == {"L005"}
    assert res.report.missing == []


@pytest.mark.parametrize("path", [SF_SGLANG, SF_HF], ids=lambda p: p.name)
@pytest.mark.parametrize("engine", ["sglang", "vllm", "sglang==0.5.11", "trtllm"])
def test_specforge_exports_ok(path, engine):
    res = one(path, engine)
    assert res.ok, [f.message for f in res.findings]


# --- every fixture × every era: the expected verdict comes from the engine facts ---------------

EXPECTED_ERRORS = {
    # (fixture, era-min-version) -> error codes
    ("train-save", "0.4.6"): {"L002", "L004", "L005"},  # 0.4.6-0.4.8: layers.0.*_proj stacked names raise KeyError
    ("train-save", "0.4.9"): {"L002", "L005"},
    ("train-save", "0.5.2"): {"L002", "L005"},
    ("train-save", "0.5.3"): {"L002", "L005"},
    ("train-save", "0.5.12"): {"L005"},
    ("train-save", "0.5.17"): {"L005"},
    ("train-save", "0.8.5"): {"L005", "C011"},  # norm_before_residual unknown to 0.8.5
    ("train-save", "0.9.0"): {"L005", "C011"},  # no speculators configs before 0.10.1 (nor norm_before_residual)
    ("train-save", "0.11.0"): set(),
    ("train-save", "0.30.0"): set(),
    # trtllm 1.0-1.2 (modeling_speculative.py read at 1.2.0rc2): no layers.N -> midlayer rename, and the decoder takes
    # its residual before hidden_norm (norm_before_residual, on in speculators configs, is not read)
    ("train-save", "1.0.0"): {"L002", "L005", "C011"},
    ("train-save", "1.3.0"): {"L005"},
    # fc with PyTorch's default bias in 0.4.6: nothing fills model.fc.bias, which keeps nn.Linear's small default
    # init (a warning, test_fc_bias_era); o_proj has no bias (config bias/attention_bias absent)
}


@pytest.mark.parametrize("path", ALL_PRODUCERS + [STORY], ids=lambda p: p.name)
@pytest.mark.parametrize("era", [e for eras in ENGINES.values() for e in eras], ids=lambda e: f"{e.engine}-{e.min_version}")
def test_fixture_by_era(path, era):
    res = one(path, f"{era.engine}=={newest_version(era).split(' ')[0]}")
    assert res.report.era is era
    key = ("train-save" if path in (SPEC_TRAIN, SPEC_CONVERT) else path.name, era.min_version)
    if path == STORY:
        from specbridge.engines.spec import parse_version

        old = era.engine == "sglang" and era.max_version and parse_version(era.max_version) < parse_version("0.5.12")
        old = old or (era.engine == "trtllm" and era.max_version == "1.2")  # layers.0.* unread before the rename
        expected = {"L002"} if old else set()
        if era.min_version == "0.4.6":  # llama.py load_weights raises KeyError on the unresolved layers.0.*_proj names
            expected = {"L002", "L004"}
    else:
        expected = EXPECTED_ERRORS.get(key, set())
    assert codes(res) == expected, [f.message for f in res.findings]
    # every checkpoint tensor and every engine parameter is accounted for
    assert len(res.report.tensors) == len(open_checkpoint(path).tensors)
    assert all(p.status for p in res.report.params)


def test_engine_all_one_json_object():
    r = run_cli("check", STORY, "--engine", "all", "--json")
    obj = json.loads(r.stdout)
    assert r.returncode == 1 and obj["ok"] is False
    assert len(obj["results"]) == sum(len(e) for e in ENGINES.values())
    by = {(x["engine"]["name"], x["engine"]["version"]): x["ok"] for x in obj["results"]}
    assert by[("sglang", "0.5.11")] is False and by[("sglang", "0.5.23")] is True and by[("vllm", "0.33.0")] is True


def test_version_resolution():
    assert resolve("sglang==0.5.11")[0][0].min_version == "0.5.3"
    assert resolve("sglang==0.5.2")[0][0].min_version == "0.5.2"
    assert resolve("sglang==0.5.20")[0][0].min_version == "0.5.17"
    assert resolve("sglang==0.5.12")[0][0].min_version == "0.5.12"
    assert resolve("sglang==0.5.5.post3")[0][0].min_version == "0.5.3"
    assert resolve("vllm==0.32")[0][0].min_version == "0.30.0"
    assert resolve("vllm==0.20.1")[0][0].min_version == "0.18.0"
    assert resolve("vllm")[0][1] == "0.33.0"
    r = run_cli("check", STORY, "--engine", "sglang==0.3.0")
    assert r.returncode == 2 and "older than" in r.stderr
    r = run_cli("check", STORY, "--engine", "llamacpp")
    assert r.returncode == 2 and "unknown engine" in r.stderr


# --- one mutation per rule ------------------------------------------------------------------------


def test_missing_lm_head(tmp_path):
    d = mutate(SF_SGLANG, tmp_path / "m", tensors=lambda t: {k: v for k, v in t.items() if k != "lm_head.weight"})
    sg = one(d, "sglang")
    assert "L002" in codes(sg) and "lm_head.weight" in sg.report.missing
    vl = one(d, "vllm")
    # vLLM borrows the target head, but the draft vocab (128) is not the target's (512)
    assert "L010" in codes(vl) and "lm_head.weight" not in vl.report.missing


def test_model_prefix(tmp_path):
    d = mutate(SF_SGLANG, tmp_path / "m", tensors=lambda t: {f"model.{k}": v for k, v in t.items()})
    vl = one(d, "vllm==0.32")
    assert "L004" in codes(vl)
    assert any("There is no module or parameter named 'model' in LlamaModel" in e for e in vl.report.errors)
    old = one(d, "vllm==0.14")
    assert any(e.startswith("KeyError") for e in old.report.errors)


def test_unknown_key(tmp_path):
    d = mutate(SF_SGLANG, tmp_path / "m", tensors=lambda t: {**t, "decoder.extra.weight": t["norm.weight"]})
    vl = one(d, "vllm")
    assert "L004" in codes(vl) and any("'decoder'" in e for e in vl.report.errors)
    sg = one(d, "sglang")
    assert "L001" in codes(sg) and "decoder.extra.weight" in sg.report.dropped


def test_missing_tensor_is_silent_in_vllm_but_not_here(tmp_path):
    d = mutate(SF_SGLANG, tmp_path / "m", tensors=lambda t: {k: v for k, v in t.items() if "down_proj" not in k})
    vl = one(d, "vllm")
    assert vl.report.errors == []  # vLLM itself says nothing…
    assert "model.layers.0.mlp.down_proj.weight" in vl.report.missing  # …we do
    assert "L002" in codes(vl)


def test_d2t_with_full_vocab(tmp_path):
    import struct

    def full_vocab(t):
        out = dict(t)
        dt, (v, h), data = t["embed_tokens.weight"]
        out["lm_head.weight"] = (dt, [v, h], data)
        out["d2t"] = ("I64", [v], struct.pack(f"<{v}q", *([0] * v)))
        out["t2d"] = ("BOOL", [v], b"\x01" * v)
        return out

    d = mutate(SF_HF, tmp_path / "m", tensors=full_vocab, config=lambda c: c.update(draft_vocab_size=512))
    vl = one(d, "vllm")
    assert "L004" in codes(vl)
    assert any("draft_id_to_target_id" in e for e in vl.report.errors)
    assert one(d, "vllm==0.14").ok  # older vLLM always had the parameter
    assert one(d, "sglang").ok


def test_two_layers(tmp_path):
    def add_layer(t):
        out = dict(t)
        for k, (dt, shape, data) in t.items():
            if k.startswith("layers.0.") and "hidden_norm" not in k:
                k1 = k.replace("layers.0.", "layers.1.")
                if any(p in k for p in ("q_proj", "k_proj", "v_proj")):
                    shape = [shape[0], shape[1] // 2]
                    data = data[: len(data) // 2]
                out[k1] = (dt, shape, data)
        return out

    def cfg(c):
        c["transformer_layer_config"]["num_hidden_layers"] = 2

    d = mutate(SPEC_TRAIN, tmp_path / "m", tensors=add_layer, config=cfg)
    # vLLM builds a hidden_norm in every layer (the 0.27.0 and 0.32.0 runs: layers.1.hidden_norm left unfilled)
    new = one(d, "vllm")
    assert not new.ok and new.report.missing == ["model.layers.1.hidden_norm.weight"]
    d2 = mutate(
        SPEC_TRAIN,
        tmp_path / "m2",
        tensors=lambda t: {**add_layer(t), "layers.1.hidden_norm.weight": t["layers.0.hidden_norm.weight"]},
        config=cfg,
    )
    assert one(d2, "vllm").ok
    old = one(d, "sglang==0.5.11")
    assert "L006" in codes(old) and any("only supports 1 layer" in e for e in old.report.errors)
    assert "layers.1.mlp.down_proj.weight" in old.report.dropped
    v10 = one(d, "vllm==0.10.2")
    assert not v10.ok


def test_shape_mismatch(tmp_path):
    d = mutate(SF_SGLANG, tmp_path / "m", config=lambda c: c.update(intermediate_size=256))
    res = one(d, "vllm")
    assert "L003" in codes(res)
    assert {"name": "model.layers.0.mlp.down_proj.weight", "expected": [64, 256], "found": [64, 128]} in res.report.mismatched
    # SGLang >= 0.5.11 zero-pads the narrower MLP weights instead (found by running its real loader)
    sg = one(d, "sglang")
    assert codes(sg) == {"L012"} and sg.report.mismatched == []
    assert {t.status for t in sg.report.tensors if "mlp" in t.name} == {"padded"}
    # 0.5.2-era and older raise; a wider checkpoint is cut silently in every SGLang version
    assert "L003" in codes(one(d, "sglang==0.4.9.post6"))
    wide = mutate(SF_SGLANG, tmp_path / "w", config=lambda c: c.update(intermediate_size=64))
    # vLLM's linear weight loaders narrow a wider checkpoint too (the 0.27.0 and 0.32.0 runs: intermediate-smaller loads)
    assert "L012" in codes(one(wide, "sglang==0.4.9.post6")) and "L012" in codes(one(wide, "vllm"))


def test_draft_vocab_size_absent_raises_on_sglang(tmp_path):
    d = mutate(SF_SGLANG, tmp_path / "m", config=lambda c: c.pop("draft_vocab_size"))
    res = one(d, "sglang")
    assert "L006" in codes(res) and any("draft_vocab_size" in e for e in res.report.errors)


def test_fc_bias_era(tmp_path):
    """0.4.6.post5: fc = torch.nn.Linear(Ht*3, H), PyTorch's default bias=True, which no producer ships: a small
    default-initialised offset (warning). o_proj's bias follows config attention_bias/bias (default False) in
    every release (sglang/srt/models/llama.py LlamaAttention), so it is no parameter here."""
    res = one(SF_SGLANG, "sglang==0.4.6.post5")
    assert res.ok, [f.message for f in res.findings]
    [fc_bias] = [p for p in res.report.params if p.name == "model.fc.bias"]
    assert fc_bias.status == "default-init" and "model.fc.bias" not in res.report.missing
    assert any(f.code == "L002" and f.severity == "warning" and "model.fc.bias" in f.message for f in res.findings)
    assert not any(p.name.endswith("o_proj.bias") for p in res.report.params)
    assert one(SF_SGLANG, "sglang==0.4.9.post6").ok
    biased = mutate(SF_SGLANG, tmp_path / "b", config=lambda c: c.update(bias=True))
    assert any(p.name.endswith("o_proj.bias") for p in one(biased, "sglang==0.4.6.post5").report.params)


def test_null_target_hidden_size_crashes_sglang(tmp_path):
    d = mutate(SF_SGLANG, tmp_path / "m", config=lambda c: c.update(target_hidden_size=None))
    for v in ("sglang==0.5.11", "sglang==0.5.23"):
        res = one(d, v)
        assert "L006" in codes(res) and any("NoneType" in e for e in res.report.errors)
    # so does vLLM's plain-config path (hasattr/getattr, then None * n: the 0.27.0 and 0.32.0 runs raised TypeError)
    res = one(d, "vllm")
    assert not res.ok and any("NoneType" in e for e in res.report.errors)
