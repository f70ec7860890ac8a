"""Launch lines per drafter method beyond EAGLE-3 and DFlash, and check's method rules on them (L014, L015, L016, A004).

`launch` prints vLLM `method: eagle` / SGLang `EAGLE` for an EAGLE-1/2 drafter, vLLM `method: eagle3` with
`parallel_drafting: true` for a P-EAGLE one (num_speculative_tokens from its speculators config), and vLLM
`method: draft_model` / SGLang `STANDALONE` for a plain draft model. A line with the wrong method is an error whose fix
is the line with the right one; a vLLM line without a method runs what the release infers from the draft (its
METHOD_INFERENCE row), which check reports (L015) and flags when it is not the drafter's method (L014, A004)."""

from __future__ import annotations

import json
import shlex

import eagle1_fixtures as e1
import pytest
import zoo_fixtures as zf
from conftest import SF_SGLANG, TINY_TARGET, run_cli
from test_draft_model import make_draft, target  # noqa: F401 (target: the session fixture)

from specbridge.engines.launch import corrected_line, infer_method, parse_launch
from specbridge.engines.registry import METHOD_INFERENCE, method_inference


def vllm_line(draft, method: str | None = None, **spec) -> str:
    body = ({"method": method} if method else {}) | {"model": str(draft)} | spec
    return shlex.join(["vllm", "serve", str(TINY_TARGET), "--speculative-config", json.dumps(body, separators=(",", ":"))])


def sglang_line(draft, algo: str, *flags: str) -> str:
    head = ["python", "-m", "sglang.launch_server", "--model-path", str(TINY_TARGET), "--speculative-algorithm", algo]
    return shlex.join(head + ["--speculative-draft-model-path", str(draft), *flags])


def found(draft, engine: str, line: str, target_dir=TINY_TARGET) -> tuple[int, list[dict]]:
    r = run_cli("check", draft, "-e", engine, "--target", target_dir, "--launch", line, "--json")
    body = json.loads(r.stdout)
    fs = body["findings"] if "findings" in body else [f for res in body["results"] for f in res["findings"]]
    return r.returncode, fs


def by(fs: list[dict], code: str) -> list[dict]:
    return [f for f in fs if f["code"] == code]


@pytest.fixture(scope="module")
def fx(tmp_path_factory):
    root = tmp_path_factory.mktemp("methods")
    ts = e1.tensors(bias=False)  # fc.bias is L013's (no engine loads it): these fixtures are about the method
    return {
        "e1": e1.write(root / "drafter-one", e1.config(), ts),  # research layout: vLLM builds EagleLlamaForCausalLM
        "e1-sglang": e1.write(root / "drafter-sg", e1.config(architectures=["LlamaForCausalLMEagle"]), ts),
        "e1-named3": e1.write(root / "llama-eagle3-distill", e1.config(), ts),
        "peagle": zf.write(root / "p-drafter", zf.peagle_config(), zf.peagle_tensors()),
    }


# --- EAGLE-1/2 -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("engine", ["vllm==0.27.0", "vllm==0.32.0", "sglang==0.4.8", "sglang==0.5.23"])
def test_launch_prints_the_eagle_line_and_check_finds_no_method_error_in_it(fx, engine):
    draft = fx["e1"] if engine.startswith("vllm") else fx["e1-sglang"]
    r = run_cli("launch", draft, "-e", engine, "--target", TINY_TARGET)
    assert r.returncode == 0, r.stderr
    line = r.stdout.strip()
    if engine.startswith("vllm"):
        assert shlex.split(line) == shlex.split(vllm_line(draft, method="eagle", num_speculative_tokens=3))
    else:
        want = sglang_line(
            draft, "EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"
        )
        assert shlex.split(line) == shlex.split(want)
    rc, fs = found(draft, engine, line)
    assert not by(fs, "L014") and not [f for f in fs if f["severity"] == "error"], fs


def test_sglang_eagle_line_takes_a_tree(fx):
    r = run_cli("launch", fx["e1-sglang"], "-e", "sglang==0.5.23", "--target", TINY_TARGET, "--steps", "2", "--topk", "4")
    assert r.returncode == 0 and "--speculative-eagle-topk 4 --speculative-num-draft-tokens 8" in r.stdout
    r = run_cli("launch", fx["e1"], "-e", "vllm==0.32.0", "--target", TINY_TARGET, "--topk", "2")
    assert r.returncode == 2 and "not a tree" in r.stderr


@pytest.mark.parametrize("engine", ["sglang==0.4.8", "sglang==0.5.11", "sglang==0.5.23"])
def test_eagle1_launched_as_eagle3_on_sglang_is_the_hot_token_attribute_error(fx, engine):
    draft = fx["e1-sglang"]
    right = sglang_line(draft, "EAGLE", "--speculative-num-steps", "3")
    rc, fs = found(draft, engine, right.replace(" EAGLE ", " EAGLE3 "))
    [f] = by(fs, "L014")
    assert rc == 1 and f["severity"] == "error" and "AttributeError" in f["message"] and "hot-token ids" in f["message"]
    assert f["fix"] == f"launch with EAGLE: {right}"  # the user's own line, the algorithm replaced
    rc, fs = found(draft, engine, right.replace(" EAGLE ", " NEXTN "))  # NEXTN is EAGLE's alias in every release read
    assert not by(fs, "L014")


@pytest.mark.parametrize("engine", ["vllm==0.27.0", "vllm==0.32.0"])
def test_eagle1_launched_as_eagle3_on_vllm_is_renamed_to_an_eagle3_class(fx, engine):
    right = vllm_line(fx["e1"], method="eagle", num_speculative_tokens=3)
    rc, fs = found(fx["e1"], engine, vllm_line(fx["e1"], method="eagle3", num_speculative_tokens=3))
    [f] = by(fs, "L014")
    assert rc == 1 and "Eagle3LlamaForCausalLM" in f["message"] and "(3 × H)" in f["message"]
    assert f["fix"] == f"launch with EAGLE: {right}"


def test_eagle3_launched_as_eagle_gets_the_eagle3_line(tmp_path_factory):
    """sglang #21272: an EAGLE-3 drafter launched as EAGLE serves at accept length 1.0 without an error (A004)."""
    line = f"python -m sglang.launch_server --model-path {TINY_TARGET} --speculative-algorithm EAGLE --speculative-draft-model-path {SF_SGLANG} --speculative-num-steps 3"
    rc, fs = found(SF_SGLANG, "sglang==0.5.23", line)
    [f] = by(fs, "A004")
    assert rc == 1 and f["fix"] == "launch with EAGLE3: " + line.replace(" EAGLE ", " EAGLE3 ")
    # vLLM without a method: the path says neither eagle- nor eagle3, so 0.32 runs it as a plain draft model
    link = tmp_path_factory.mktemp("plain") / "my-drafter"  # vLLM reads the whole path: no 'eagle3' in it
    link.symlink_to(SF_SGLANG)
    rc, fs = found(link, "vllm==0.32.0", vllm_line(link, num_speculative_tokens=3))
    [a4] = by(fs, "A004")
    assert "DRAFT_MODEL" in a4["message"] and "infers it from the draft" in a4["message"]
    assert json.loads(shlex.split(a4["fix"].split(": ", 1)[1])[-1])["method"] == "eagle3"
    [l15] = by(fs, "L015")
    assert l15["severity"] == "info" and "infers DRAFT_MODEL" in l15["message"]
    # named eagle: vLLM renames LlamaForCausalLMEagle3 to a name no registry has (run: the vLLM conformance test)
    rc, fs = found(link, "vllm==0.32.0", vllm_line(link, method="eagle", num_speculative_tokens=3))
    assert "EagleLlamaForCausalLMEagle3, which no registry has" in by(fs, "A004")[0]["message"] and not by(fs, "L015")


# --- vLLM's inference of the method ------------------------------------------------------------------------------------


def test_inference_rows_per_release():
    old, new = method_inference("vllm", "0.27.0"), method_inference("vllm", "0.32.0")
    assert method_inference("vllm", "0.28.1") is old and method_inference("vllm", "0.29.0") is new
    assert method_inference("vllm", "0.26.0") is None and method_inference("sglang", "0.5.23") is None
    glimmer = {"architectures": ["MuseGlimmerAssistantModel"]}
    assert infer_method(old, None, "/m/assistant", glimmer) == "DRAFT_MODEL"  # 0.27.0 tests only the path for dflash
    assert infer_method(new, None, "/m/assistant", glimmer) == "DFLASH"
    assert infer_method(new, None, "/m/Yuhuili/EAGLE-LLaMA3-8B", {}) == "EAGLE"  # lower-cased path
    assert infer_method(new, None, "/m/AngelSlim/Qwen3-8B_eagle3", {}) == "EAGLE3"
    assert infer_method(new, "DRAFT_MODEL", "/m/qwen-eagle3-distill", {}) == "EAGLE3"  # draft_model is tested again
    assert infer_method(new, "EAGLE", "/m/qwen-eagle3-distill", {}) == "EAGLE"  # a kept method stays
    assert infer_method(new, None, "/m/x", {"model_type": "medusa"}) == "MEDUSA"
    assert [r.first for r in METHOD_INFERENCE["vllm"]] == ["0.27.0", "0.29.0"]


def test_no_method_on_an_eagle1_path_and_a_release_not_read(fx):
    rc, fs = found(fx["e1"], "vllm==0.32.0", vllm_line(fx["e1"], num_speculative_tokens=3))
    [f] = by(fs, "L014")
    assert "launched with DRAFT_MODEL (no method given" in f["message"]
    assert json.loads(shlex.split(f["fix"].split(": ", 1)[1])[-1]) == {
        "method": "eagle",
        "model": str(fx["e1"]),
        "num_speculative_tokens": 3,
    }
    # the EAGLE-1 drafter under a path naming eagle3: vLLM runs EAGLE-3, fc never gets its input
    rc, fs = found(fx["e1-named3"], "vllm==0.32.0", vllm_line(fx["e1-named3"], num_speculative_tokens=3))
    assert "launched with EAGLE3 (no method given" in by(fs, "L014")[0]["message"]


# --- P-EAGLE -------------------------------------------------------------------------------------------------------------


def test_peagle_launch_turns_parallel_drafting_on_with_the_trained_tokens(fx):
    r = run_cli("launch", fx["peagle"], "-e", "vllm==0.32.0", "--target", TINY_TARGET)
    assert r.returncode == 0, r.stderr
    spec = json.loads(shlex.split(r.stdout)[-1])
    assert spec == {"method": "eagle3", "model": str(fx["peagle"]), "num_speculative_tokens": 4, "parallel_drafting": True}
    rc, fs = found(fx["peagle"], "vllm==0.32.0", r.stdout.strip())
    assert not by(fs, "L016") and not by(fs, "L014")
    r = run_cli("launch", fx["peagle"], "-e", "vllm==0.32.0", "--target", TINY_TARGET, "--steps", "2")
    assert json.loads(shlex.split(r.stdout)[-1])["num_speculative_tokens"] == 2


@pytest.mark.parametrize("engine", ["vllm==0.27.0", "vllm==0.32.0"])
def test_peagle_without_parallel_drafting_or_on_v2(fx, engine):
    serial = vllm_line(fx["peagle"], method="eagle3", num_speculative_tokens=4)
    rc, fs = found(fx["peagle"], engine, serial)
    [f] = by(fs, "L016")
    assert f["severity"] == "warning" and "plain EAGLE-3" in f["message"]
    assert json.loads(shlex.split(f["fix"].split(": ", 1)[1])[-1])["parallel_drafting"] is True
    v2 = "env VLLM_USE_V2_MODEL_RUNNER=1 " + vllm_line(fx["peagle"], method="eagle3", num_speculative_tokens=4, parallel_drafting=True)
    rc, fs = found(fx["peagle"], engine, v2)
    [f] = by(fs, "L016")
    assert rc == 1 and f["severity"] == "error" and "Model Runner V2 does not yet support" in f["message"]
    rc, fs = found(fx["peagle"], engine, vllm_line(fx["peagle"], method="eagle", num_speculative_tokens=4))
    assert by(fs, "L014") and not by(fs, "L016")


# --- plain draft models ------------------------------------------------------------------------------------------------


def test_plain_draft_model_lines_and_their_methods(tmp_path, target):  # noqa: F811
    draft = make_draft(tmp_path / "small", target)
    r = run_cli("launch", draft, "-e", "vllm==0.32.0", "--target", target)
    assert r.returncode == 0, r.stderr
    assert json.loads(shlex.split(r.stdout)[-1]) == {"method": "draft_model", "model": str(draft), "num_speculative_tokens": 3}
    line = r.stdout.strip()
    rc, fs = found(draft, "vllm==0.32.0", line, target)
    assert rc == 0 and not by(fs, "L014") and "infers DRAFT_MODEL" in by(fs, "L015")[0]["message"]
    r = run_cli("launch", draft, "-e", "sglang==0.5.23", "--target", target, "--steps", "4")
    assert r.returncode == 0 and "--speculative-algorithm STANDALONE" in r.stdout and "--speculative-num-draft-tokens 5" in r.stdout
    r = run_cli("launch", draft, "-e", "sglang==0.5.1", "--target", target)
    assert r.returncode == 1 and "invalid choice: 'STANDALONE'" in r.stderr
    # launched as EAGLE: the fix is the draft_model line
    rc, fs = found(draft, "vllm==0.32.0", line.replace('"draft_model"', '"eagle"'), target)
    [f] = by(fs, "L014")
    assert rc == 1 and f["fix"] == f"launch with DRAFT_MODEL: {line}"
    rc, fs = found(
        draft,
        "sglang==0.5.23",
        shlex.join(
            [
                "python",
                "-m",
                "sglang.launch_server",
                "--model-path",
                str(target),
                "--speculative-algorithm",
                "EAGLE3",
                "--speculative-draft-model-path",
                str(draft),
            ]
        ),
        target,
    )
    assert "STANDALONE" in by(fs, "L014")[0]["fix"]


def test_plain_draft_model_under_an_eagle3_path_runs_as_eagle3(tmp_path, target):  # noqa: F811
    """vLLM tests an explicit draft_model against the path too: a distilled small model named …eagle3… runs as EAGLE-3."""
    draft = make_draft(tmp_path / "qwen-eagle3-distill", target)
    line = vllm_line(draft, method="draft_model", num_speculative_tokens=3)
    rc, fs = found(draft, "vllm==0.32.0", line, target)
    [f] = by(fs, "L014")
    assert rc == 1 and "launched with EAGLE3 (method draft_model, which vllm 0.32.0 infers it" in f["message"]
    assert "serve the draft from a path without it" in f["fix"] and "'eagle3'" in f["fix"]


def test_corrected_line_keeps_every_other_word():
    line = 'env A=1 vllm serve /t --tp 2 --speculative-config=\'{"method":"eagle3","model":"/d","num_speculative_tokens":2}\''
    out = shlex.split(corrected_line(parse_launch(line), "EAGLE", (("parallel_drafting", True),)))
    assert out[:6] == ["env", "A=1", "vllm", "serve", "/t", "--tp"] and out[-1].startswith("--speculative-config=")
    assert json.loads(out[-1].split("=", 1)[1]) == {
        "method": "eagle",
        "model": "/d",
        "num_speculative_tokens": 2,
        "parallel_drafting": True,
    }
    sg = "python -m sglang.launch_server --model-path /t --speculative-draft-model-path /d"
    assert corrected_line(parse_launch(sg), "EAGLE").endswith("--speculative-algorithm EAGLE")
    assert "--speculative-algorithm=STANDALONE" in corrected_line(parse_launch(sg + " --speculative-algorithm=EAGLE"), "STANDALONE")
