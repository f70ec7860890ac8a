"""The MTP / NextN head inside a target (issue #24, item 1): found from config and tensor names in every layout
vLLM 0.32.0's MTP loaders read, from the index alone; shard headers only for the shards that hold the head;
`inspect` of such a target shows the head instead of refusing a full model, locally and over the Hub."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from specbridge.checkpoint.index import read_target_index
from specbridge.families.detect import detect_family
from specbridge.families.mtp import find_mtp_head, mtp_shapes

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_mtp_index import build, deepseek_v3_config, target_tensors  # noqa: E402

sys.path.pop(0)


def sb(*args, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "specbridge", *map(str, args)], capture_output=True, text=True, timeout=120, env=env, check=False
    )


# --- name lists as the published checkpoints write them (and vLLM's loaders read them) ----------------------


def deepseek_names(layers: int = 3, mtp_layers: int = 1) -> list[str]:
    """DeepSeek-V3 (bench_mtp_index.py's tensors: FP8 weights, weight_scale_inv, experts, layer N = the MTP layer)."""
    return [t[0] for t in target_tensors(layers, experts=2, dense=1, mtp_layers=mtp_layers)]


def glm_names(layers: int = 2, experts: int = 2) -> list[str]:
    """GLM-4.5 (Glm4MoeForCausalLM): model.layers.{N}.{eh_proj,enorm,hnorm,shared_head.norm} with a full MoE decoder
    layer and no embed_tokens / shared_head.head copies (vLLM's glm4_moe_mtp.py maps the target's onto them)."""
    out = ["model.embed_tokens.weight", "model.norm.weight", "lm_head.weight"]
    for i in range(layers + 1):
        p = f"model.layers.{i}."
        out += [p + n for n in ("input_layernorm.weight", "post_attention_layernorm.weight", "self_attn.o_proj.weight")]
        out += [p + f"self_attn.{x}_proj.{w}" for x in "qkv" for w in ("weight", "bias")]
        if i == 0:
            out += [p + f"mlp.{x}_proj.weight" for x in ("gate", "up", "down")]
            continue
        out += [p + "mlp.gate.weight", p + "mlp.gate.e_score_correction_bias"]
        out += [p + f"mlp.experts.{e}.{x}_proj.weight" for e in range(experts) for x in ("gate", "up", "down")]
        out += [p + f"mlp.shared_experts.{x}_proj.weight" for x in ("gate", "up", "down")]
    p = f"model.layers.{layers}."
    return out + [p + "eh_proj.weight", p + "enorm.weight", p + "hnorm.weight", p + "shared_head.norm.weight"]


def qwen3_next_names(prefix: str = "model.", layers: int = 4) -> list[str]:
    """Qwen3-Next / Qwen3.5: linear- and full-attention decoder layers, and the MTP module under `mtp.`
    (mtp.fc, mtp.pre_fc_norm_{embedding,hidden}, mtp.norm, mtp.layers.0.*; qwen3_next_mtp.py renames mtp. -> model.)."""
    out = [prefix + "embed_tokens.weight", prefix + "norm.weight", "lm_head.weight"]
    for i in range(layers):
        p = f"{prefix}layers.{i}."
        if i % 4 == 3:
            out += [p + f"self_attn.{x}.weight" for x in ("q_proj", "k_proj", "v_proj", "o_proj", "q_norm", "k_norm")]
        else:
            out += [p + f"linear_attn.{x}" for x in ("A_log", "dt_bias", "conv1d.weight", "in_proj_qkvz.weight", "in_proj_ba.weight")]
        out += [p + "input_layernorm.weight", p + "post_attention_layernorm.weight", p + "mlp.gate.weight"]
        out += [p + f"mlp.experts.0.{x}_proj.weight" for x in ("gate", "up", "down")] + [p + "mlp.shared_expert_gate.weight"]
    out += ["mtp.fc.weight", "mtp.norm.weight", "mtp.pre_fc_norm_embedding.weight", "mtp.pre_fc_norm_hidden.weight"]
    q = "mtp.layers.0."
    out += [q + f"self_attn.{x}.weight" for x in ("q_proj", "k_proj", "v_proj", "o_proj", "q_norm", "k_norm")]
    out += [q + "input_layernorm.weight", q + "post_attention_layernorm.weight", q + "mlp.gate.weight"]
    return out + [q + f"mlp.experts.0.{x}_proj.weight" for x in ("gate", "up", "down")]


def mimo_names(layers: int = 2) -> list[str]:
    """MiMo-7B: model.mtp_layers.{i}.{token_layernorm,hidden_layernorm,input_proj,final_layernorm} and a Qwen2
    decoder block (mimo_mtp.py's hf_to_vllm_mapper)."""
    out = ["model.embed_tokens.weight", "model.norm.weight", "lm_head.weight"]
    block = ["input_layernorm.weight", "post_attention_layernorm.weight", "self_attn.o_proj.weight"]
    block += [f"self_attn.{x}_proj.{w}" for x in "qkv" for w in ("weight", "bias")]
    block += [f"mlp.{x}_proj.weight" for x in ("gate", "up", "down")]
    for i in range(layers):
        out += [f"model.layers.{i}.{b}" for b in block]
    heads = ["token_layernorm.weight", "hidden_layernorm.weight", "input_proj.weight", "final_layernorm.weight"]
    return out + [f"model.mtp_layers.0.{b}" for b in block + heads]


# --- the finder ------------------------------------------------------------------------------------------


def test_deepseek_layer_after_the_decoder_with_every_part():
    head = find_mtp_head(deepseek_v3_config(layers=3, experts=2, dense=1), deepseek_names())
    assert (head.style, head.announced, head.announced_by, head.base) == ("layers-after-decoder", 1, "num_nextn_predict_layers", 3)
    [layer] = head.layers
    assert (layer.index, layer.prefix) == (3, "model.layers.3.")
    assert layer.parts == {"enorm", "hnorm", "eh_proj", "shared_head.norm", "shared_head.head", "embed_tokens", "decoder"}
    assert layer.missing == () and head.missing_layers() == [] and head.extra_layers() == []
    assert all(t.startswith("model.layers.3.") for t in layer.tensors)
    assert "model.layers.3.mlp.experts.1.down_proj.weight_scale_inv" in layer.tensors
    assert not any(t.startswith("model.layers.2.") for t in layer.tensors)  # the decoder's last layer is not the head
    assert head.to_json()["layers"][0]["parts"][:3] == ["enorm", "hnorm", "eh_proj"]


def test_glm_layer_without_embedding_or_head_copies_is_complete():
    cfg = {"architectures": ["Glm4MoeForCausalLM"], "model_type": "glm4_moe", "num_hidden_layers": 2, "num_nextn_predict_layers": 1}
    head = find_mtp_head(cfg, glm_names())
    [layer] = head.layers
    assert layer.index == 2 and layer.parts == {"enorm", "hnorm", "eh_proj", "shared_head.norm", "decoder"}
    assert layer.missing == ()  # embed_tokens / shared_head.head are the target's, shared
    assert "model.layers.2.mlp.experts.1.up_proj.weight" in layer.tensors and "model.layers.2.self_attn.q_proj.bias" in layer.tensors


def test_qwen3_next_mtp_module_names_map_onto_the_parts():
    head = find_mtp_head({"model_type": "qwen3_next", "num_hidden_layers": 4}, qwen3_next_names())
    assert head.style == "mtp-module" and head.announced == 0 and head.base == 0
    [layer] = head.layers
    assert layer.index == 0 and layer.prefix == "mtp.layers.0."
    assert layer.parts == {"enorm", "hnorm", "eh_proj", "shared_head.norm", "decoder"}
    assert dict(layer.raw) == {
        "eh_proj": "mtp.fc",
        "enorm": "mtp.pre_fc_norm_embedding",
        "hnorm": "mtp.pre_fc_norm_hidden",
        "shared_head.norm": "mtp.norm",
    }
    assert "mtp.fc.weight" in layer.tensors and not any(t.startswith("model.") for t in layer.tensors)
    assert head.extra_layers() == []  # nothing announced: nothing is "extra"


def test_qwen3_5_announces_in_its_text_config():
    cfg = {
        "architectures": ["Qwen3_5MoeForConditionalGeneration"],
        "model_type": "qwen3_5_moe",
        "text_config": {"model_type": "qwen3_5_moe_text", "num_hidden_layers": 4, "mtp_num_hidden_layers": 1},
    }
    names = qwen3_next_names(prefix="model.language_model.")
    head = find_mtp_head(cfg, names)
    assert (head.style, head.announced, head.announced_by) == ("mtp-module", 1, "text_config.mtp_num_hidden_layers")
    assert head.missing_layers() == [] and head.layers[0].missing == ()
    v = detect_family(cfg, dict.fromkeys(names, ()))
    assert v.name == "mtp" and any("text_config.mtp_num_hidden_layers" in e for e in v.evidence)


def test_mimo_mtp_layers():
    cfg = {"architectures": ["MiMoForCausalLM"], "num_hidden_layers": 2, "num_nextn_predict_layers": 1}
    head = find_mtp_head(cfg, mimo_names())
    assert head.style == "mtp-layers" and head.announced == 1 and head.base == 0
    [layer] = head.layers
    assert layer.prefix == "model.mtp_layers.0." and layer.missing == ()
    assert dict(layer.raw) == {
        "eh_proj": "model.mtp_layers.0.input_proj",
        "enorm": "model.mtp_layers.0.token_layernorm",
        "hnorm": "model.mtp_layers.0.hidden_layernorm",
        "shared_head.norm": "model.mtp_layers.0.final_layernorm",
    }
    assert not any(t.startswith("model.layers.") for t in layer.tensors)


LONGCAT = [  # longcat_flash_mtp.py's new_to_old_names_mapping, the checkpoint side
    "model.mtp.embed_tokens.weight",
    "model.mtp.norm.weight",
    "model.mtp.layers.0.eh_proj.weight",
    "model.mtp.layers.0.enorm.m.weight",
    "model.mtp.layers.0.hnorm.m.weight",
    "model.mtp.layers.0.input_layernorm.weight",
    "model.mtp.layers.0.self_attn.q_a_proj.weight",
    "model.mtp.layers.0.transformer_layer.mlp.down_proj.weight",
]
MIMO_V2 = [  # mimo_v2_mtp.py: MiMoV2MTPLayer under model.mtp.layers.{i}
    *(f"model.mtp.layers.0.{p}.weight" for p in ("enorm", "hnorm", "eh_proj", "input_layernorm", "pre_mlp_layernorm", "final_layernorm")),
    "model.mtp.layers.0.self_attn.q_proj.weight",
    "model.mtp.layers.0.mlp.gate_proj.weight",
]
ERNIE = [  # ernie_mtp.py's hf_to_vllm_mapper: one flat block per part
    "model.mtp_emb_norm.0.weight",
    "model.mtp_hidden_norm.0.weight",
    "model.mtp_linear_proj.0.weight",
    "model.mtp_block.0.self_attn.q_proj.weight",
    "model.mtp_block.0.mlp.experts.0.up_proj.weight",
]


@pytest.mark.parametrize(
    "cfg, names, style, raw",
    [
        (
            {"model_type": "longcat_flash", "num_hidden_layers": 2, "num_nextn_predict_layers": 1},
            LONGCAT,
            "model-mtp-layers",
            "model.mtp.norm",
        ),
        (
            {"architectures": ["MiMoV2FlashForCausalLM"], "num_hidden_layers": 2},
            MIMO_V2,
            "model-mtp-layers",
            "model.mtp.layers.0.final_layernorm",
        ),
        ({"model_type": "ernie4_5_moe", "num_hidden_layers": 2, "num_nextn_predict_layers": 1}, ERNIE, "mtp-blocks", None),
    ],
)
def test_the_other_layouts_vllm_reads(cfg, names, style, raw):
    decoder = [f"model.layers.{i}.self_attn.q_proj.weight" for i in range(2)] + ["model.embed_tokens.weight"]
    head = find_mtp_head(cfg, decoder + names)
    assert head.style == style and [layer.index for layer in head.layers] == [0]
    [layer] = head.layers
    assert {"enorm", "hnorm", "eh_proj", "decoder"} <= layer.parts and layer.missing == () and layer.unclassified == ()
    assert set(layer.tensors) == set(names)
    assert dict(layer.raw).get("shared_head.norm") == raw


def test_announced_but_absent_is_missing_not_silent():
    """MiniMax-M2.5: the config announces MTP modules, the repository has none."""
    names = deepseek_names()
    names = [n for n in names if not n.startswith("model.layers.3.")]
    head = find_mtp_head(deepseek_v3_config(layers=3, experts=2, dense=1), names)
    assert head.layers == () and head.missing_layers() == [3] and head.style == "layers-after-decoder"
    assert any("no MTP tensor" in e for e in head.evidence)
    minimax = {"architectures": ["MiniMaxM2ForCausalLM"], "model_type": "minimax_m2", "num_hidden_layers": 3, "num_mtp_modules": 3}
    head = find_mtp_head(minimax, names)
    assert (head.announced, head.announced_by, head.missing_layers()) == (3, "num_mtp_modules", [3, 4, 5])


def test_one_of_two_layers_absent():
    cfg = deepseek_v3_config(layers=3, experts=2, dense=1) | {"num_nextn_predict_layers": 2}
    names = [n for n in deepseek_names(mtp_layers=2) if not n.startswith("model.layers.4.")]
    head = find_mtp_head(cfg, names)
    assert [layer.index for layer in head.layers] == [3] and head.missing_layers() == [4]
    partial = [n for n in deepseek_names() if not n.startswith(("model.layers.3.enorm", "model.layers.3.eh_proj"))]
    [layer] = find_mtp_head(deepseek_v3_config(layers=3, experts=2, dense=1), partial).layers
    assert layer.missing == ("enorm", "eh_proj")


def test_tensors_without_a_config_key_are_found_from_the_mtp_only_parts():
    cfg = {k: v for k, v in deepseek_v3_config(layers=3, experts=2, dense=1).items() if k != "num_nextn_predict_layers"}
    head = find_mtp_head(cfg, deepseek_names())
    assert head.announced == 0 and [layer.index for layer in head.layers] == [3]
    del cfg["num_hidden_layers"]  # and without num_hidden_layers: the first layer with enorm/hnorm/eh_proj
    assert [layer.index for layer in find_mtp_head(cfg, deepseek_names()).layers] == [3]


def test_no_head_and_nothing_announced():
    cfg = {k: v for k, v in deepseek_v3_config(layers=3).items() if k != "num_nextn_predict_layers"}
    head = find_mtp_head(cfg, [n for n in deepseek_names() if not n.startswith("model.layers.3.")])
    assert head.style == "none" and head.layers == () and head.missing_layers() == []


# --- detection: a full model with an MTP head, announced or present ---------------------------------------


def test_detection_of_full_models_with_an_mtp_head():
    cfg = deepseek_v3_config(layers=3, experts=2, dense=1)
    without_head = [n for n in deepseek_names() if not n.startswith("model.layers.3.")]
    v = detect_family(cfg, dict.fromkeys(without_head, ()))
    assert v.name == "mtp" and v.candidates == []  # not ambiguous with causal_lm (MiniMax-M2.5)
    no_key = {k: x for k, x in cfg.items() if k != "num_nextn_predict_layers"}
    assert detect_family(no_key, dict.fromkeys(deepseek_names(), ())).name == "mtp"
    assert detect_family(no_key, dict.fromkeys(without_head, ())).name == "causal_lm"  # no head, none announced
    minimax = {"architectures": ["MiniMaxM2ForCausalLM"], "num_hidden_layers": 3, "num_mtp_modules": 3}
    assert detect_family(minimax, dict.fromkeys(without_head, ())).name == "mtp"


# --- reading: the index only, and the headers of the head's shards -----------------------------------------


@pytest.fixture(scope="module")
def target(tmp_path_factory) -> Path:
    return build(tmp_path_factory.mktemp("ds") / "deepseek-v3-tiny", layers=3, experts=4, dense=1, shards=6)


def test_the_index_is_read_without_any_shard_header(target):
    idx = read_target_index(target)
    want = (target / "config.json").stat().st_size + (target / "model.safetensors.index.json").stat().st_size
    assert (idx.bytes_read, idx.headers_read, idx.shards, idx.storage) == (want, 0, 6, "safetensors-sharded")
    assert idx.tensors == len(target_tensors(3, 4, 1))


def _header_bytes(path: Path) -> int:
    with open(path, "rb") as f:
        return 8 + int.from_bytes(f.read(8), "little")


def test_mtp_shapes_reads_only_the_shards_holding_the_head(target):
    idx = read_target_index(target)
    head = find_mtp_head(idx.config, idx.weight_map)
    shards = sorted({idx.weight_map[t] for t in head.layers[0].tensors})
    assert len(shards) < idx.shards
    before = idx.bytes_read
    shapes = mtp_shapes(idx, head)
    assert idx.headers_read == len(shards) == head.headers_read
    assert idx.bytes_read - before == sum(_header_bytes(target / s) for s in shards)
    assert shapes["model.layers.3.eh_proj.weight"] == ("BF16", (7168, 14336))
    assert shapes["model.layers.3.mlp.experts.0.up_proj.weight"] == ("F8_E4M3", (2048, 7168))
    assert shapes["model.layers.3.mlp.experts.0.up_proj.weight_scale_inv"] == ("F32", (16, 56))
    assert set(shapes) == set(head.layers[0].tensors)


def _copy_without_decoder_shards(target: Path, dest: Path) -> Path:
    """The target with every shard that holds no MTP tensor replaced by garbage: reading one would fail."""
    idx = read_target_index(target)
    head = find_mtp_head(idx.config, idx.weight_map)
    keep = {idx.weight_map[t] for t in head.layers[0].tensors}
    dest.mkdir()
    for f in target.iterdir():
        if f.name.endswith(".safetensors") and f.name not in keep:
            (dest / f.name).write_bytes(b"not a safetensors file")
        else:
            os.link(f, dest / f.name)
    return dest


def test_inspect_shows_the_head_reading_no_decoder_shard(target, tmp_path):
    d = _copy_without_decoder_shards(target, tmp_path / "t")
    r = sb("inspect", d, "--json")
    assert r.returncode == 0, r.stderr
    j = json.loads(r.stdout)
    assert j["schema"] == "specbridge.inspect/2" and j["ok"] is True and j["error"] is None and j["family"]["name"] == "mtp"
    m = j["mtp"]
    assert (m["style"], m["announced"], m["found"], m["missing_layers"]) == ("layers-after-decoder", 1, 1, [])
    assert m["layers"][0]["index"] == 3 and m["layers"][0]["missing_parts"] == []
    assert m["layers"][0]["named_tensors"]["model.layers.3.shared_head.head.weight"] == {"dtype": "BF16", "shape": [129280, 7168]}
    assert m["layers"][0]["dtypes"]["F8_E4M3"] > 0
    assert 0 < m["headers_read"] < j["target"]["shards"] == 6
    h = sb("inspect", d)
    assert h.returncode == 0, h.stderr
    for line in (
        "MTP head:",
        "style: layers-after-decoder",
        "announced layers: 1 (config num_nextn_predict_layers)",
        "found layers: 1 (3)",
    ):
        assert line in h.stdout, h.stdout
    assert f"{m['headers_read']} shard header(s) of 6" in h.stdout and f"read: {m['bytes_read']} bytes" in h.stdout


def test_inspect_of_a_target_whose_head_was_dropped(tmp_path):
    d = build(tmp_path / "requant", layers=3, experts=2, dense=1, shards=3, drop=("model.layers.3.",))
    r = sb("inspect", d, "--json")
    assert r.returncode == 0, r.stderr
    m = json.loads(r.stdout)["mtp"]
    assert (m["found"], m["missing_layers"], m["headers_read"]) == (0, [3], 0)
    h = sb("inspect", d)
    assert "MISSING layers (announced, no tensor): 3" in h.stdout, h.stdout
    part = build(tmp_path / "no-enorm", layers=3, experts=2, dense=1, shards=3, drop=("model.layers.3.enorm.",))
    j = json.loads(sb("inspect", part, "--json").stdout)["mtp"]
    assert j["layers"][0]["missing_parts"] == ["enorm"] and "enorm" not in j["layers"][0]["parts"]
    assert "MISSING parts: enorm" in sb("inspect", part).stdout


def test_a_full_model_without_mtp_is_still_refused(tmp_path):
    d = build(tmp_path / "plain", layers=3, experts=2, dense=1, shards=2, drop=("model.layers.3.",))
    cfg = json.loads((d / "config.json").read_text())
    del cfg["num_nextn_predict_layers"]
    (d / "config.json").write_text(json.dumps(cfg))
    r = sb("inspect", d)
    assert r.returncode == 2 and "full model" in r.stderr and "MTP head" not in r.stdout


def test_a_single_file_target_with_an_mtp_head(tmp_path):
    d = build(tmp_path / "single", layers=3, experts=2, dense=1, shards=1)
    (d / "model-00001-of-000001.safetensors").rename(d / "model.safetensors")
    (d / "model.safetensors.index.json").unlink()
    r = sb("inspect", d, "--json")
    assert r.returncode == 0, r.stderr
    j = json.loads(r.stdout)
    assert j["storage"] == "safetensors" and j["mtp"]["found"] == 1 and j["mtp"]["headers_read"] == 1
    assert j["mtp"]["bytes_read"] == (d / "config.json").stat().st_size + _header_bytes(d / "model.safetensors")


# --- over the Hub ----------------------------------------------------------------------------------------


def test_inspect_over_the_hub_reads_the_index_and_the_heads_shards_only(target, tmp_path):
    pytest.importorskip("huggingface_hub")
    from hubserver import FakeHub, make_repo

    idx = read_target_index(target)
    head = find_mtp_head(idx.config, idx.weight_map)
    mtp_shards = {idx.weight_map[t] for t in head.layers[0].tensors}
    with FakeHub({"org/ds-tiny": make_repo(target)}) as hub:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE_"))}
        env |= {"HF_ENDPOINT": hub.url, "HF_HUB_CACHE": str(tmp_path / "cache"), "HF_HUB_DISABLE_TELEMETRY": "1"}
        r = sb("inspect", "org/ds-tiny", "--json", env=env)
        served, requests = hub.stats.body_bytes, list(hub.stats.requests)
    assert r.returncode == 0, r.stderr
    got, want = json.loads(r.stdout), json.loads(sb("inspect", target, "--json").stdout)
    assert got["source"]["hub"] == "org/ds-tiny" and got["path"].startswith("org/ds-tiny@")
    for k in ("family", "target", "storage"):
        assert got[k] == want[k], k
    assert got["mtp"] == want["mtp"]  # the same head, the same bytes read
    shard_gets = {p.rsplit("/", 1)[-1] for m, p, rng in requests if m == "GET" and p.endswith(".safetensors")}
    assert shard_gets == mtp_shards
    assert all(rng for m, p, rng in requests if m == "GET" and p.endswith(".safetensors"))  # ranges, never a file
    assert served < got["mtp"]["bytes_read"] + 20_000  # the files read, plus the API listing


def test_a_single_file_target_over_the_hub(tmp_path):
    pytest.importorskip("huggingface_hub")
    from hubserver import FakeHub, make_repo

    d = build(tmp_path / "single", layers=3, experts=2, dense=1, shards=1)
    (d / "model-00001-of-000001.safetensors").rename(d / "model.safetensors")
    (d / "model.safetensors.index.json").unlink()
    with FakeHub({"org/single": make_repo(d)}) as hub:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE_"))}
        env |= {"HF_ENDPOINT": hub.url, "HF_HUB_CACHE": str(tmp_path / "cache"), "HF_HUB_DISABLE_TELEMETRY": "1"}
        r = sb("inspect", "org/single", "--json", env=env)
        gets = [rng for m, p, rng in hub.stats.requests if m == "GET" and p.endswith("model.safetensors")]
    assert r.returncode == 0, r.stderr
    j = json.loads(r.stdout)
    assert j["mtp"] == json.loads(sb("inspect", d, "--json").stdout)["mtp"]
    assert j["mtp"]["found"] == 1 and j["mtp"]["headers_read"] == 1
    assert gets and all(gets)  # the header by range, never the file
