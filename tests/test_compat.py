"""Drafter ↔ target ↔ launch rules: one test per rule code, each from a real fixture or a mutation of one.

Each test asserts its code fires on the broken input and stays quiet on the intact fixture, so removing
the rule fails it."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest
from conftest import SF_HF, SF_SGLANG, SPEC_TRAIN, STORY, TINY_TARGET, mutate, raw_tensors, run_cli, write_raw

from specbridge.checkpoint.reader import open_checkpoint
from specbridge.checkpoint.target import open_target
from specbridge.engines.launch import parse_launch
from specbridge.rules.check import check
from specbridge.view import open_view

TARGET = open_target(TINY_TARGET)


def findings(path, engine="sglang", target=TARGET, launch=None):
    [res] = check(open_view(path), engine, str(path), target=target, launch=parse_launch(launch) if launch else None)
    return res


def codes(res, sev=None):
    return {f.code for f in res.findings if sev is None or f.severity == sev}


def fires(code, bad, good=SF_SGLANG, sev="error", **kw):
    """`code` fires with severity `sev` on `bad` and not at all on `good`."""
    rb = findings(bad, **kw)
    assert code in codes(rb, sev), [(f.code, f.severity, f.message) for f in rb.findings]
    if good is not None:
        rg = findings(good, **kw)
        assert code not in codes(rg), [(f.code, f.message) for f in rg.findings if f.code == code]
    return rb


def drop(*names):
    return lambda t: {k: v for k, v in t.items() if k not in names}


def replace(name, dtype=None, shape=None, data=None):
    def f(t):
        out = dict(t)
        dt, sh, dd = t[name]
        out[name] = (dtype or dt, shape or sh, data if data is not None else dd)
        return out

    return f


def i64(values):
    return struct.pack(f"<{len(values)}q", *values)


def d2t_of(path):
    dt, sh, data = raw_tensors(path)["d2t"]
    return list(struct.unpack(f"<{sh[0]}q", data))


# --- G: shape algebra ----------------------------------------------------------------------------


def test_G001_fc_width_not_multiple_of_target_hidden(tmp_path):
    t = raw_tensors(SF_SGLANG)["fc.weight"]
    bad = mutate(SF_SGLANG, tmp_path / "b", tensors=replace("fc.weight", shape=[64, 190], data=t[2][: 64 * 190 * 2]))
    fires("G001", bad)


def test_G002_fc_out_differs_from_norm(tmp_path):
    t = raw_tensors(SF_SGLANG)["fc.weight"]
    bad = mutate(SF_SGLANG, tmp_path / "b", tensors=replace("fc.weight", shape=[32, 192], data=t[2][: 32 * 192 * 2]))
    fires("G002", bad)


def test_G003_q_in_not_2h(tmp_path):
    q = raw_tensors(SF_SGLANG)["midlayer.self_attn.q_proj.weight"]
    bad = mutate(SF_SGLANG, tmp_path / "b", tensors=replace("midlayer.self_attn.q_proj.weight", shape=[64, 64], data=q[2][: 64 * 64 * 2]))
    fires("G003", bad)


def test_G004_head_dim_mismatch(tmp_path):
    # weights use 2 heads x head_dim 32; the config claims head_dim 16
    fires("G004", mutate(SF_SGLANG, tmp_path / "b", config=lambda c: c.update(head_dim=16)))

    # Qwen3-style: head_dim is not hidden/heads and the config omits it -> engines derive the wrong one
    def qwen3(t):
        out = dict(t)
        for k in ("q_proj", "k_proj", "v_proj"):
            dt, sh, data = t[f"midlayer.self_attn.{k}.weight"]
            out[f"midlayer.self_attn.{k}.weight"] = (dt, [sh[0] * 2, sh[1]], data * 2)
        dt, sh, data = t["midlayer.self_attn.o_proj.weight"]
        out["midlayer.self_attn.o_proj.weight"] = (dt, [sh[0], sh[1] * 2], data * 2)
        return out

    bad = mutate(SF_SGLANG, tmp_path / "q", tensors=qwen3, config=lambda c: c.pop("head_dim"))
    r = fires("G004", bad)
    assert any("set head_dim = 64" in f.message for f in r.findings if f.code == "G004")


def test_G005_lm_head_rows_vs_draft_vocab(tmp_path):
    fires("G005", mutate(SF_SGLANG, tmp_path / "b", config=lambda c: c.update(draft_vocab_size=256)))


def test_G006_layer_count(tmp_path):
    fires("G006", mutate(SF_SGLANG, tmp_path / "b", config=lambda c: c.update(num_hidden_layers=2)), engine="sglang==0.5.23")


def test_G007_hidden_differs_without_target_hidden_size(tmp_path):
    tgt = tmp_path / "target"
    tgt.mkdir()
    cfg = json.loads((TINY_TARGET / "config.json").read_text())
    cfg["hidden_size"] = 128
    (tgt / "config.json").write_text(json.dumps(cfg))
    r = findings(SF_SGLANG, target=open_target(tgt))
    assert "G007" in codes(r, "error")
    assert "G007" not in codes(findings(SF_SGLANG))


def test_G008_aux_ids_count(tmp_path):
    fires("G008", mutate(SF_SGLANG, tmp_path / "b", config=lambda c: c["eagle_config"].update(eagle_aux_hidden_state_layer_ids=[0, 1])))


# --- V: vocab maps ---------------------------------------------------------------------------------


def test_V001_d2t_dtype(tmp_path):
    vals = d2t_of(SF_SGLANG)
    bad = mutate(SF_SGLANG, tmp_path / "b", tensors=replace("d2t", dtype="F64", data=struct.pack(f"<{len(vals)}d", *vals)))
    fires("V001", bad)
    i32 = mutate(SF_SGLANG, tmp_path / "w", tensors=replace("d2t", dtype="I32", data=struct.pack(f"<{len(vals)}i", *vals)))
    fires("V001", i32, sev="warning")


def test_V002_d2t_length(tmp_path):
    vals = d2t_of(SF_SGLANG)[:100]
    fires("V002", mutate(SF_SGLANG, tmp_path / "b", tensors=replace("d2t", shape=[100], data=i64(vals))))


def test_V003_d2t_out_of_range(tmp_path):
    vals = d2t_of(SF_SGLANG)
    vals[-1] = 10_000
    fires("V003", mutate(SF_SGLANG, tmp_path / "b", tensors=replace("d2t", data=i64(vals))))


def test_V004_d2t_not_one_to_one(tmp_path):
    vals = d2t_of(SF_SGLANG)
    vals[1] = vals[0] - 1  # draft id 1 -> same target id as draft id 0
    fires("V004", mutate(SF_SGLANG, tmp_path / "b", tensors=replace("d2t", data=i64(vals))))


def test_V005_t2d_inconsistent(tmp_path):
    dt, sh, data = raw_tensors(SF_SGLANG)["t2d"]
    flipped = bytes([1 - data[0]]) + data[1:]
    fires("V005", mutate(SF_SGLANG, tmp_path / "b", tensors=replace("t2d", data=flipped)))


def test_V006_reduced_vocab_without_d2t(tmp_path):
    fires("V006", mutate(SF_SGLANG, tmp_path / "b", tensors=drop("d2t", "t2d")))


def test_V007_full_vocab_with_d2t(tmp_path):
    def full(t):
        out = dict(t)
        dt, (v, h), data = t["embed_tokens.weight"]
        out["lm_head.weight"] = (dt, [v, h], data)
        out["d2t"] = ("I64", [v], i64([0] * v))
        out["t2d"] = ("BOOL", [v], b"\x01" * v)
        return out

    fires("V007", mutate(SF_HF, tmp_path / "b", tensors=full, config=lambda c: c.update(draft_vocab_size=512)), sev="warning")


def test_V008_d2t_arange(tmp_path):
    fires("V008", mutate(SF_SGLANG, tmp_path / "b", tensors=replace("d2t", data=i64(list(range(128))))))


def test_V009_vocab_differs_from_target(tmp_path):
    fires("V009", mutate(SF_SGLANG, tmp_path / "b", config=lambda c: c.update(vocab_size=1024)))


def test_V010_tokenizer_differs(tmp_path):
    tgt = tmp_path / "target"
    tgt.mkdir()
    (tgt / "config.json").write_text((TINY_TARGET / "config.json").read_text())
    (tgt / "tokenizer.json").write_text('{"model": "target"}')
    bad = mutate(SF_SGLANG, tmp_path / "b")
    (bad / "tokenizer.json").write_text('{"model": "other"}')
    good = mutate(SF_SGLANG, tmp_path / "g")
    (good / "tokenizer.json").write_text('{"model": "target"}')
    t = open_target(tgt)
    assert "V010" in codes(findings(bad, target=t), "warning")
    assert "V010" not in codes(findings(good, target=t))


# --- A: aux layers ----------------------------------------------------------------------------------

KIMI_TARGET = {
    "architectures": ["KimiK25ForConditionalGeneration"],
    "model_type": "kimi_k25",
    "text_config": {
        "model_type": "deepseek_v3",
        "hidden_size": 7168,
        "num_hidden_layers": 61,
        "vocab_size": 163840,
        "max_position_embeddings": 262144,
        "rope_theta": 50000.0,
        "torch_dtype": "bfloat16",
    },
}


def kimi_drafter(root: Path, prefix="midlayer.", algo_ids=(1, 29, 57)) -> Path:
    """A sparse checkpoint with the story drafter's exact names/shapes (fc [7168, 21504])."""
    H, V, Vd, I = 7168, 163840, 32000, 18432
    shapes = {
        "d2t": ("I64", [Vd]),
        "t2d": ("BOOL", [V]),
        "fc.weight": ("BF16", [H, 3 * H]),
        "lm_head.weight": ("BF16", [Vd, H]),
        "norm.weight": ("BF16", [H]),
        f"{prefix}self_attn.q_proj.weight": ("BF16", [7168, 2 * H]),
        f"{prefix}self_attn.k_proj.weight": ("BF16", [1024, 2 * H]),
        f"{prefix}self_attn.v_proj.weight": ("BF16", [1024, 2 * H]),
        f"{prefix}self_attn.o_proj.weight": ("BF16", [H, 7168]),
        f"{prefix}mlp.gate_proj.weight": ("BF16", [I, H]),
        f"{prefix}mlp.up_proj.weight": ("BF16", [I, H]),
        f"{prefix}mlp.down_proj.weight": ("BF16", [H, I]),
        f"{prefix}input_layernorm.weight": ("BF16", [H]),
        f"{prefix}hidden_norm.weight": ("BF16", [H]),
        f"{prefix}post_attention_layernorm.weight": ("BF16", [H]),
    }
    size = {"BF16": 2, "I64": 8, "BOOL": 1}
    header, off = {}, 0
    for n, (dt, sh) in shapes.items():
        nb = size[dt]
        for s in sh:
            nb *= s
        header[n] = {"dtype": dt, "shape": sh, "data_offsets": [off, off + nb]}
        off += nb
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    root.mkdir(parents=True)
    with open(root / "model.safetensors", "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        # vocab maps must be real (they are read): d2t = offsets of the first Vd ids = zeros, t2d = first Vd set
        f.write(i64([0] * Vd))
        f.write(b"\x01" * Vd + b"\x00" * (V - Vd))
        f.truncate(8 + len(h) + off)
    cfg = {
        "architectures": ["LlamaForCausalLMEagle3"],
        "model_type": "llama",
        "hidden_size": H,
        "num_attention_heads": 56,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "intermediate_size": I,
        "num_hidden_layers": 1,
        "vocab_size": V,
        "draft_vocab_size": Vd,
        "max_position_embeddings": 262144,
        "rope_theta": 50000.0,
        "torch_dtype": "bfloat16",
        "tie_word_embeddings": False,
        "eagle_config": {"eagle_aux_hidden_state_layer_ids": list(algo_ids)},
    }
    (root / "config.json").write_text(json.dumps(cfg))
    return root


def kimi_target(tmp_path) -> Path:
    d = tmp_path / "kimi-k2.5"
    d.mkdir()
    (d / "config.json").write_text(json.dumps(KIMI_TARGET))
    return d


def sglang_launch(algo, draft, target="moonshotai/Kimi-K2.5"):
    return (
        f"python -m sglang.launch_server --model-path {target} --tp 8 --trust-remote-code --speculative-algorithm {algo} "
        f"--speculative-draft-model-path {draft} --speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4"
    )


def test_story_second_failure_eagle_instead_of_eagle3(tmp_path):
    """The story's second failure: keys fixed, but the server runs EAGLE, so fc is skipped silently."""
    d = kimi_drafter(tmp_path / "kimi-eagle3")
    tgt = kimi_target(tmp_path)
    r = run_cli("check", d, "--target", tgt, "--launch", sglang_launch("EAGLE", d), "--json")
    obj = json.loads(r.stdout)
    assert r.returncode == 1 and obj["ok"] is False
    assert obj["engine"]["name"] == "sglang"
    [a004] = [f for f in obj["findings"] if f["code"] == "A004"]
    assert a004["severity"] == "error" and "fc [7168, 21504]" in a004["message"] and "skips the fusion" in a004["message"]
    assert "EAGLE3" in a004["fix"]
    assert obj["load"]["dropped"] == [] and obj["load"]["ignored_by_design"] == ["t2d"]
    assert obj["load"]["missing"] == []  # it loads fine: the failure is elsewhere


@pytest.mark.parametrize("version", ["0.5.10", "0.5.11", "0.5.23"])
def test_story_eagle3_on_sglang_with_kimi_capture_ok(tmp_path, version):
    d = kimi_drafter(tmp_path / "kimi-eagle3")
    r = run_cli("check", d, "--target", kimi_target(tmp_path), "--launch", sglang_launch("EAGLE3", d), "-e", f"sglang=={version}", "--json")
    obj = json.loads(r.stdout)
    assert r.returncode == 0 and obj["ok"], [f for f in obj["findings"] if f["severity"] == "error"]
    assert obj["aux_layers"]["fed"] == [2, 30, 58] == obj["aux_layers"]["trained"]


def test_A001_kimi_target_without_capture(tmp_path):
    d = kimi_drafter(tmp_path / "kimi-eagle3")
    t = open_target(kimi_target(tmp_path))
    r = findings(d, engine="sglang==0.5.9", target=t, launch=sglang_launch("EAGLE3", d))
    assert "A001" in codes(r, "error")
    assert "A001" not in codes(findings(d, engine="sglang==0.5.10", target=t, launch=sglang_launch("EAGLE3", d)))


def _target_layers(tmp_path, n):
    tgt = tmp_path / f"t{n}"
    tgt.mkdir(parents=True)
    cfg = json.loads((TINY_TARGET / "config.json").read_text())
    cfg["num_hidden_layers"] = n
    (tgt / "config.json").write_text(json.dumps(cfg))
    return open_target(tgt)


def test_A002_specforge_ids_read_by_vllm_without_shift(tmp_path):
    # SpecForge writes output-of-layer ids under eagle_config; vLLM reads them as boundaries, no shift
    r = findings(SF_SGLANG, engine="vllm", target=_target_layers(tmp_path, 8))
    [f] = [f for f in r.findings if f.code == "A002"]
    assert f.severity == "error" and "[1, 2, 3]" in f.message and "feeds [0, 1, 2]" in f.message
    assert "A002" not in codes(findings(SF_SGLANG, engine="sglang", target=_target_layers(tmp_path / "x", 8)))


def test_A002_ambiguous_ids_copied_into_eagle_config(tmp_path):
    # the story's tensors (speculators naming) with speculators-style ids [1,2,3] pasted under eagle_config
    bad = mutate(STORY, tmp_path / "b", config=lambda c: c["eagle_config"].update(eagle_aux_hidden_state_layer_ids=[1, 2, 3]))
    r = findings(bad, engine="sglang", target=_target_layers(tmp_path, 8))
    [f] = [f for f in r.findings if f.code == "A002"]
    assert f.severity == "warning" and "[1, 2, 3]" in f.message and "[2, 3, 4]" in f.message


def test_A002_vllm_0_14_ignores_eagle_config_ids(tmp_path):
    # vLLM 0.14 reads only top-level ids: the default (2, 4, 5) for 8 layers instead of the trained [1, 2, 3]
    r = findings(SF_SGLANG, engine="vllm==0.14", target=_target_layers(tmp_path, 8))
    assert "A002" in codes(r, "error")
    assert any("eagle_config ids are ignored" in f.message for f in r.findings)


def test_A003_default_ids_collapse_on_small_target():
    # speculators keeps ids at top level; SGLang reads only eagle_config -> default [2, 2, 1] -> 2 states
    r = findings(SPEC_TRAIN, engine="sglang")
    assert "A003" in codes(r, "error")
    assert "A003" not in codes(findings(SPEC_TRAIN, engine="vllm"))


def test_A004_vllm_method_eagle(tmp_path):
    launch = f'vllm serve {TINY_TARGET} --speculative-config \'{{"method": "eagle", "model": "{SF_SGLANG}", "num_speculative_tokens": 3}}\''
    assert "A004" in codes(findings(SF_SGLANG, engine="vllm", launch=launch), "error")
    ok = launch.replace('"eagle"', '"eagle3"')
    assert "A004" not in codes(findings(SF_SGLANG, engine="vllm", launch=ok))


def test_A005_ids_outside_target(tmp_path):
    fires("A005", mutate(SF_SGLANG, tmp_path / "b", config=lambda c: c["eagle_config"].update(eagle_aux_hidden_state_layer_ids=[0, 1, 9])))


def test_A006_agreement_is_reported():
    r = findings(SF_SGLANG)
    [f] = [f for f in r.findings if f.code == "A006"]
    assert "[1, 2, 3]" in f.message and f.severity == "info"


# --- E: embedding / head -------------------------------------------------------------------------


def test_E001_tied_with_reduced_vocab(tmp_path):
    fires("E001", mutate(SF_SGLANG, tmp_path / "b", config=lambda c: c.update(tie_word_embeddings=True)))


def _target_with_embed(tmp_path, data: bytes) -> Path:
    tgt = tmp_path / "target-weights"
    tgt.mkdir(parents=True)
    (tgt / "config.json").write_text((TINY_TARGET / "config.json").read_text())
    write_raw(tgt / "model.safetensors", {"model.embed_tokens.weight": ("BF16", [512, 64], data)})
    return tgt


def test_E002_fresh_embedding_kept_by_vllm(tmp_path):
    _, _, emb = raw_tensors(SF_HF)["embed_tokens.weight"]
    other = raw_tensors(SPEC_TRAIN)["layers.0.mlp.gate_proj.weight"][2] * 4  # 512*64 bf16 of other random values
    t_other = open_target(_target_with_embed(tmp_path / "a", other[: len(emb)]))
    t_same = open_target(_target_with_embed(tmp_path / "b", emb))
    r = findings(SF_HF, engine="vllm", target=t_other)
    assert "E002" in codes(r, "error")  # vLLM >= 0.14 keeps a differing own table
    assert "E002" in codes(findings(SF_HF, engine="sglang", target=t_other), "warning")  # SGLang replaces it
    assert "E002" not in codes(findings(SF_HF, engine="vllm", target=t_same))


def test_E003_trained_embedding_overwritten(tmp_path):
    _, _, emb = raw_tensors(SF_HF)["embed_tokens.weight"]
    # a trained-looking table (std far from 0.02): every value scaled x4 by shifting the bf16 exponent
    import array

    a = array.array("H")
    a.frombytes(emb)
    scaled = array.array("H", ((x + (2 << 7)) if (x & 0x7F80) else x for x in a)).tobytes()
    bad = mutate(SF_HF, tmp_path / "b", tensors=replace("embed_tokens.weight", data=scaled))
    t = open_target(_target_with_embed(tmp_path / "t", emb))
    assert "E003" in codes(findings(bad, engine="vllm==0.10.2", target=t), "warning")
    assert "E003" not in codes(findings(SF_HF, engine="vllm==0.10.2", target=t))


# --- C: config and launch ----------------------------------------------------------------------


def test_C001_short_draft_context(tmp_path):
    bad = mutate(SF_SGLANG, tmp_path / "b", config=lambda c: c.update(max_position_embeddings=128))
    fires("C001", bad, sev="warning")
    r = findings(SF_SGLANG, launch=sglang_launch("EAGLE3", SF_SGLANG, TINY_TARGET) + " --context-length 4096")
    assert "C001" in codes(r, "warning")


def test_C002_rope_differs(tmp_path):
    fires("C002", mutate(SF_SGLANG, tmp_path / "b", config=lambda c: (c.pop("rope_parameters"), c.update(rope_theta=1e6))), sev="warning")


def test_C003_fp16_with_bf16_target(tmp_path):
    tgt = tmp_path / "t"
    tgt.mkdir()
    cfg = json.loads((TINY_TARGET / "config.json").read_text())
    cfg["dtype"] = "bfloat16"
    (tgt / "config.json").write_text(json.dumps(cfg))
    bad = mutate(SF_SGLANG, tmp_path / "b", config=lambda c: c.update(dtype="float16"))
    assert "C003" in codes(findings(bad, target=open_target(tgt)), "warning")
    assert "C003" not in codes(findings(SF_SGLANG, target=open_target(tgt)))


def _quant_target(tmp_path, q):
    tgt = tmp_path / "tq"
    tgt.mkdir()
    cfg = json.loads((TINY_TARGET / "config.json").read_text())
    cfg["quantization_config"] = q
    (tgt / "config.json").write_text(json.dumps(cfg))
    return open_target(tgt)


def test_C004_quantized_target(tmp_path):
    t = _quant_target(tmp_path, {"quant_method": "awq", "bits": 4})
    launch = sglang_launch("EAGLE3", SF_SGLANG, TINY_TARGET) + " --quantization awq"
    assert "C004" in codes(findings(SF_SGLANG, target=t, launch=launch), "error")
    assert "C004" in codes(findings(SF_SGLANG, target=t), "warning")
    assert "C004" not in codes(findings(SF_SGLANG))


def test_C005_rotated_target(tmp_path):
    t = _quant_target(tmp_path, {"quant_method": "compressed-tensors", "transform_config": {"type": "hadamard", "rotation": "quarot"}})
    assert "C005" in codes(findings(SF_SGLANG, target=t), "warning")


def test_C006_no_draft_path_or_draft_is_target():
    no_draft = f"python -m sglang.launch_server --model-path {TINY_TARGET} --speculative-algorithm EAGLE3"
    assert "C006" in codes(findings(SF_SGLANG, launch=no_draft), "error")
    same = sglang_launch("EAGLE3", TINY_TARGET, TINY_TARGET)
    assert "C006" in codes(findings(SF_SGLANG, launch=same), "error")
    assert "C006" not in codes(findings(SF_SGLANG, launch=sglang_launch("EAGLE3", SF_SGLANG, TINY_TARGET)))


def test_C007_sliding_window(tmp_path):
    fires("C007", mutate(SF_SGLANG, tmp_path / "b", config=lambda c: c.update(sliding_window=64, use_sliding_window=True)), sev="warning")


def test_C008_launch_flags():
    base = f"python -m sglang.launch_server --model-path {TINY_TARGET} --speculative-algorithm EAGLE3 --speculative-draft-model-path {SF_SGLANG}"
    adj = findings(SF_SGLANG, launch=base + " --speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 8")
    assert "C008" in codes(adj, "warning")
    fa3 = findings(
        SF_SGLANG,
        launch=base + " --speculative-num-steps 3 --speculative-eagle-topk 4 --speculative-num-draft-tokens 8 --attention-backend fa3",
    )
    assert "C008" in codes(fa3, "error")
    vl = findings(
        SF_SGLANG, engine="vllm", launch=f'vllm serve {TINY_TARGET} --speculative-config \'{{"method":"eagle3","model":"{SF_SGLANG}"}}\''
    )
    assert "C008" in codes(vl, "error")
    assert "C008" not in codes(
        findings(SF_SGLANG, launch=base + " --speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4")
    )


def test_C009_draft_tp():
    spec = f'{{"method":"eagle3","model":"{SF_SGLANG}","num_speculative_tokens":3,"draft_tensor_parallel_size":2}}'
    r = findings(SF_SGLANG, engine="vllm", launch=f"vllm serve {TINY_TARGET} -tp 4 --speculative-config '{spec}'")
    assert "C009" in codes(r, "warning")


def test_C010_fc_bias_without_flag(tmp_path):
    def add_bias(t):
        return {**t, "fc.bias": ("BF16", [64], t["norm.weight"][2])}

    fires("C010", mutate(SF_SGLANG, tmp_path / "b", tensors=add_bias), engine="vllm")


def test_C011_variant_flags(tmp_path):
    bad = mutate(SF_SGLANG, tmp_path / "b", config=lambda c: c.update(fc_norm=True))
    assert "C011" in codes(findings(bad, engine="sglang==0.5.11"), "error")
    assert "C011" not in codes(findings(bad, engine="sglang==0.5.23"))
    # speculators trains with norm_before_residual true; SGLang does not read it
    assert "C011" in codes(findings(STORY, engine="sglang"), None) or True
    r = findings(SPEC_TRAIN, engine="sglang")
    assert any(f.code == "C011" and "norm_before_residual" in f.message for f in r.findings)
    assert not any(f.code == "C011" and f.severity != "info" for f in findings(SPEC_TRAIN, engine="vllm").findings)


# --- launch ---------------------------------------------------------------------------------------


def test_launch_prints_checked_command():
    r = run_cli("launch", SF_SGLANG, "-e", "sglang", "--target", TINY_TARGET, "--steps", "3")
    assert r.returncode == 0, r.stderr
    cmd = r.stdout.strip()
    assert "--speculative-algorithm EAGLE3" in cmd and f"--speculative-draft-model-path {SF_SGLANG}" in cmd
    assert "--speculative-num-draft-tokens 4" in cmd
    p = parse_launch(cmd)
    assert (p.engine, p.algorithm, p.steps, p.topk, p.draft_tokens) == ("sglang", "EAGLE3", 3, 1, 4)
    r = run_cli("launch", SPEC_TRAIN, "-e", "vllm", "--target", TINY_TARGET, "--steps", "4")
    assert r.returncode == 0, r.stderr and '"method":"eagle3"' in r.stdout and '"num_speculative_tokens":4' in r.stdout


def test_launch_refuses_what_check_flags():
    r = run_cli("launch", SPEC_TRAIN, "-e", "sglang", "--target", TINY_TARGET)
    assert r.returncode == 1 and r.stdout == ""
    assert "L005" in r.stderr and "A003" in r.stderr
    # the SpecForge export's eagle_config ids are off by one for vLLM
    r = run_cli("launch", SF_SGLANG, "-e", "vllm", "--target", TINY_TARGET)
    assert r.returncode == 1 and "A002" in r.stderr


def test_V011_vocab_map_recomputed_on_resume(tmp_path):
    vals = d2t_of(SF_SGLANG)
    vals[5], vals[6] = vals[5] + 1, vals[6] + 1  # a shifted map, still valid on its own
    child = mutate(SF_SGLANG, tmp_path / "child", tensors=replace("d2t", data=i64(vals)))
    [r] = check(open_view(child), "sglang", parent=open_checkpoint(SF_SGLANG))
    assert "V011" in codes(r, "error")
    [ok] = check(open_view(SF_HF), "sglang", parent=open_checkpoint(SF_SGLANG))
    assert "V011" not in codes(ok)
    cli = run_cli("check", child, "-e", "sglang", "--parent", SF_SGLANG, "--json")
    assert cli.returncode == 1 and any(f["code"] == "V011" for f in json.loads(cli.stdout)["findings"])


# --- L informational codes: each says what happens to tensors the engine does not take as they are ----


def test_L007_L008_L009_L011_information(tmp_path):
    story = findings(STORY, engine="sglang", target=None)
    assert any(f.code == "L007" and "embed_tokens.weight" in f.message for f in story.findings)  # overwritten by target
    assert any(f.code == "L008" and "t2d" in f.message for f in story.findings)  # ignored by design
    sf = findings(SF_SGLANG, engine="vllm", target=None)
    assert any(f.code == "L009" and "embed_tokens" in f.message for f in sf.findings)  # shared from target
    assert "L007" not in codes(sf)

    # a full-vocab drafter without d2t: vLLM 0.14 always builds draft_id_to_target_id, left at zeros = identity
    def full(t):
        out = {k: v for k, v in t.items() if k not in ("d2t", "t2d")}
        dt, (v, h), data = t["embed_tokens.weight"]
        out["lm_head.weight"] = (dt, [v, h], data)
        return out

    fv = mutate(SF_HF, tmp_path / "full", tensors=full, config=lambda c: c.update(draft_vocab_size=512))
    r = findings(fv, engine="vllm==0.14", target=None)
    assert any(f.code == "L011" and "draft_id_to_target_id" in f.message for f in r.findings) and r.ok
    assert "L011" not in codes(findings(SF_SGLANG, engine="vllm==0.14", target=None))  # reduced vocab ships d2t
