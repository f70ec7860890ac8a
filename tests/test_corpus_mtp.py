"""The corpus of published MTP-carrying targets (tests/fixtures/corpus-mtp/): the compact key-list form expands back
to exactly the names it was built from, every entry's MTP names agree with what it says the files show, and the
derived key lists still meet the published numbers they were checked against (tensor counts, dtype split, the
byte length of a published index and config)."""

import importlib.util
import json
import re
from pathlib import Path

import pytest

DIR = Path(__file__).parent / "fixtures" / "corpus-mtp"
SPEC = importlib.util.spec_from_file_location("corpus_mtp_build", DIR / "_build.py")
build = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(build)
ENTRIES = {p.name: json.loads(p.read_text()) for p in sorted(DIR.glob("*.json")) if not p.name.startswith("_")}


def entry_by_id(model_id: str) -> dict:
    return ENTRIES[model_id.replace("/", "__") + ".json"]


# ---------------------------------------------------------------- the compact form


def test_expand_ranges_alternations_and_literals():
    assert build.expand("a.{0..2}.{x,y}.w") == ["a.0.x.w", "a.0.y.w", "a.1.x.w", "a.1.y.w", "a.2.x.w", "a.2.y.w"]
    assert build.expand("model.layers.61.eh_proj.weight") == ["model.layers.61.eh_proj.weight"]
    assert build.expand("l.{3,5,9}.b") == ["l.3.b", "l.5.b", "l.9.b"]
    assert build.pattern_count("m.{3..60}.e.{0..255}.{gate,up,down}_proj.{weight,weight_scale_inv}") == 58 * 256 * 3 * 2


def test_expand_refuses_an_empty_range():
    with pytest.raises(ValueError, match="empty range"):
        build.expand("l.{5..2}.w")


def test_compress_round_trips_names_shards_and_gaps():
    weight_map = {f"m.layers.{i}.mlp.experts.{e}.w": f"s{i // 2}" for i in range(4) for e in range(3)}
    weight_map |= {f"m.layers.{i}.linear_attn.conv1d.weight": "s9" for i in (0, 1, 2, 4, 5, 6)}
    weight_map["lm_head.weight"] = None
    patterns = build.compress(weight_map)
    assert build.expand_map(patterns) == weight_map
    assert {"pattern": "m.layers.{0..1}.mlp.experts.{0..2}.w", "count": 6, "shard": "s0"} in patterns
    assert {"pattern": "m.layers.{0,1,2,4,5,6}.linear_attn.conv1d.weight", "count": 6, "shard": "s9"} in patterns


def test_compress_splits_a_set_that_is_not_one_product():
    weight_map = dict.fromkeys(["l.0.a.0", "l.0.a.1", "l.1.a.0"])
    patterns = build.compress(weight_map)
    assert sorted(p["pattern"] for p in patterns) == ["l.0.a.{0..1}", "l.1.a.0"]


def test_expand_map_refuses_a_name_twice_and_a_wrong_count():
    with pytest.raises(ValueError, match="named twice"):
        build.expand_map([{"pattern": "a.{0..1}", "count": 2, "shard": None}, {"pattern": "a.1", "count": 1, "shard": None}])
    with pytest.raises(ValueError, match="stored count 3"):
        build.expand_map([{"pattern": "a.{0..1}", "count": 3, "shard": None}])


# ---------------------------------------------------------------- every entry


DECODER_LAYER = re.compile(r"model\.layers\.(\d+)\.")
MTP_LAYER = re.compile(r"(?:model\.)?mtp(?:_layers)?\.(?:layers\.)?(\d+)\.")


def mtp_layer_numbers(names, cfg: dict) -> list[int]:
    """The MTP layer indices the names show, for each layout the corpus holds."""
    text = cfg.get("text_config", cfg)
    base = text.get("num_hidden_layers")
    found = set()
    for name in names:
        m = DECODER_LAYER.match(name)
        if m and int(m.group(1)) >= base:
            found.add(int(m.group(1)))
        m = MTP_LAYER.match(name)
        if m:
            found.add(int(m.group(1)))
    return sorted(found)


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_entry_fields_and_key_count(name):
    obj = ENTRIES[name]
    for field in ("id", "producer", "family", "role", "config", "weight_map", "weight_map_patterns", "quantization"):
        assert field in obj, field
    for field in ("mtp_expected", "source", "exactness", "notes", "key_count"):
        assert obj[field], field
    assert set(obj["exactness"]) == {"config", "weight_map"}
    assert name == obj["id"].replace("/", "__") + ".json"
    assert len(build.all_names(obj)) == obj["key_count"]


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_entry_mtp_names_agree_with_what_it_says_the_files_show(name):
    obj = ENTRIES[name]
    expected = obj["mtp_expected"]
    names = build.all_names(obj)
    assert expected["mtp_tensor_count"] == len(obj["weight_map"])
    assert mtp_layer_numbers(names, obj["config"]) == expected["layers_present"]
    # nothing MTP-shaped hides in the patterns: every MTP name is in weight_map
    assert mtp_layer_numbers(build.expand_map(obj["weight_map_patterns"]), obj["config"]) == []
    announced = sum(v for v in expected["announced"].values() if type(v) is int)
    assert announced >= 1, "every entry's config announces MTP"
    if not expected["layers_present"]:
        assert "verdict" in expected or "unindexed" in expected


def test_the_corpus_spans_the_families_and_the_head_dropping_requantizations():
    families = {o["family"] for o in ENTRIES.values() if o["mtp_expected"]["layers_present"]}
    assert {"deepseek_mtp", "glm4_moe_mtp", "qwen3_next_mtp", "qwen3_5_mtp", "mimo_mtp"} <= families
    targets = [o for o in ENTRIES.values() if o["role"] == "target"]
    assert len(targets) >= 6
    requants = [o for o in ENTRIES.values() if o["role"] != "target"]
    assert {o["id"] for o in requants if not o["weight_map"]} == {
        "nvidia/GLM-4.7-NVFP4",
        "bryce-hoehn/Qwen3.5-18B-REAP-A3B-Coding",
    }
    assert any(o["quantization"].get("mtp_in_ignore_list") == ["mtp.fc"] for o in requants)


# ---------------------------------------------------------------- published numbers


def test_mimo_index_is_the_mirrored_one():
    obj = entry_by_id("XiaomiMiMo/MiMo-7B")
    names = build.all_names(obj)
    assert obj["metadata"] == {"total_size": 15666819072}
    assert len(names) == 451
    assert set(names.values()) == {f"model-0000{i}-of-00004.safetensors" for i in range(1, 5)}
    assert sorted(n.split(".", 3)[3] for n in obj["weight_map"]) == sorted(
        ["final_layernorm.weight", "hidden_layernorm.weight", "input_layernorm.weight", "input_proj.weight"]
        + [f"mlp.{p}.weight" for p in ("down_proj", "gate_proj", "up_proj")]
        + ["post_attention_layernorm.weight", "token_layernorm.weight", "self_attn.o_proj.weight"]
        + [f"self_attn.{p}.{s}" for p in ("k_proj", "q_proj", "v_proj") for s in ("bias", "weight")]
    )


def test_reap_drops_the_head_its_config_still_announces():
    obj = entry_by_id("bryce-hoehn/Qwen3.5-18B-REAP-A3B-Coding")
    names = build.all_names(obj)
    assert obj["config"]["mtp_num_hidden_layers"] == 1
    assert len(names) == 15973 and obj["metadata"] == {"total_size": 37087995136}
    assert not [n for n in names if n.startswith("mtp.")]
    assert set(names.values()) == {f"model-0000{i}-of-00007.safetensors" for i in range(1, 8)}


def test_qwen36_awq_rebuilds_the_published_index_and_config_lengths():
    obj = entry_by_id("philbert440/Qwen3.6-27B-Uncensored-Aggressive-W4A16-AWQ")
    names = build.all_names(obj)
    assert build.index_text_length(names, 0) == build.QWEN36_INDEX_CHARS == 207510
    assert build.config_text_length(obj["config"], sort_keys=True, newline=False) == 21200
    assert "mtp.fc" in obj["config"]["quantization_config"]["ignore"]
    assert obj["weight_map"]["mtp.fc.weight"] == "model-mtp.safetensors"
    assert "mtp.layers.0.self_attn.q_proj.weight_packed" in obj["weight_map"]
    assert len(obj["weight_map"]) == 36


def test_minimax_derivation_meets_the_published_minimax_m2_reading():
    obj = entry_by_id("MiniMaxAI/MiniMax-M2.5")
    names = set(build.all_names(obj))
    scales = {n for n in names if n.endswith(".weight_scale_inv")}
    fp8 = {n.removesuffix("_scale_inv") for n in scales}
    fp32 = scales | {n for n in names if ".block_sparse_moe.gate." in n or n.endswith("e_score_correction_bias")}
    assert fp8 <= names
    assert (len(names), len(names - fp8 - fp32), len(fp32), len(fp8)) == (96103, 251, 47988, 47864)
    assert not [n for n in names if "mtp" in n or re.match(r"model\.layers\.(6[2-9])\.", n)]


def test_deepseek_config_is_the_stored_copy():
    obj = entry_by_id("deepseek-ai/DeepSeek-V3")
    assert build.config_text_length(obj["config"], sort_keys=False, newline=True) == 1660
    parts = {n.split(".", 3)[3] for n in obj["weight_map"] if "mlp" not in n and "self_attn" not in n}
    assert {"enorm.weight", "hnorm.weight", "eh_proj.weight", "embed_tokens.weight"} <= parts
    assert {"shared_head.norm.weight", "shared_head.head.weight"} <= parts


@pytest.mark.parametrize("make", build.DERIVED, ids=lambda f: f.__name__)
def test_derived_entries_are_what_the_rules_build(make):
    built = make()
    assert json.loads(json.dumps(built)) == entry_by_id(built["id"])
