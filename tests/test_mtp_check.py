"""`check` and `launch` of a target that carries an MTP head (issue #24): the head found from the index, loaded through
each engine release's MTP rows (vLLM deepseek_mtp.py / glm4_moe_mtp.py, SGLang's NextN classes), and the M rules.
The public failures reproduced from files: a head announced but absent (GLM-5 NVFP4, vllm #35548: garbage before 0.17,
a refusal after, for DeepSeek-class heads; GLM-4.5's class never checks), a quantization ignore list that does not name
the MTP layers (sglang #35797 / vllm #37667), a config that announces MTP the weights do not hold (MiniMax-M2.5 #8)."""

from __future__ import annotations

import json
from pathlib import Path

import mtp_fixtures as mx
import pytest
from conftest import run_cli

FP8 = {"quant_method": "fp8", "weight_block_size": [128, 128], "fmt": "e4m3"}


def check(path: Path, *engines: str, extra: tuple = ()) -> tuple[int, dict]:
    args = ["check", str(path), "--json", *extra]
    for e in engines:
        args += ["--engine", e]
    r = run_cli(*args)
    body = json.loads(r.stdout)
    return r.returncode, body


def results(body: dict) -> dict[str, dict]:
    rs = body["results"] if "results" in body else [body]
    return {f"{r['engine']['name']}=={r['engine']['version']}": r for r in rs}


def codes(r: dict, severity: str | None = None) -> set[str]:
    return {f["code"] for f in r["findings"] if severity is None or f["severity"] == severity}


@pytest.fixture(scope="module")
def targets(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("mtp")
    glm_fp8 = mx.glm_config(quantization_config=FP8)
    mtp_modules = [n.rsplit(".", 1)[0] for n in mx.mtp_layer(2, mx.glm_config(), lambda *s: None) if n.endswith("_proj.weight")]
    ignore = sorted({m if ".experts." not in m else m.split(".experts.")[0] + ".experts" for m in mtp_modules})
    fused = {"q_proj": "qkv_proj", "k_proj": "qkv_proj", "v_proj": "qkv_proj", "gate_proj": "gate_up_proj", "up_proj": "gate_up_proj"}
    ignore_fused = sorted({m.rsplit(".", 1)[0] + "." + fused.get(m.rsplit(".", 1)[1], m.rsplit(".", 1)[1]) for m in ignore})
    return {
        "glm": mx.write_target(d / "glm", mx.glm_config()),
        "glm-nohead": mx.write_target(d / "glm-nohead", mx.glm_config(), mtp=False),
        "glm-fp8-nohead": mx.write_target(d / "glm-fp8-nohead", glm_fp8, mtp=False),
        "glm-fp8-bf16head": mx.write_target(d / "glm-fp8-bf16head", glm_fp8),
        "glm-fp8-ignored": mx.write_target(
            d / "glm-fp8-ignored", mx.glm_config(quantization_config={**FP8, "modules_to_not_convert": ignore})
        ),
        "glm-fp8-ignored-fused": mx.write_target(
            d / "glm-fp8-ignored-fused", mx.glm_config(quantization_config={**FP8, "modules_to_not_convert": ignore_fused})
        ),
        "glm5-nvfp4-nohead": mx.write_target(
            d / "glm5-nohead",
            mx.deepseek_config(
                architectures=["GlmMoeDsaForCausalLM"], model_type="glm_moe_dsa", quantization_config={"quant_method": "modelopt_fp4"}
            ),
            mtp=False,
        ),
        "ds": mx.write_target(d / "ds", mx.deepseek_config(), copies=True),
        "ds2-half": mx.write_target(d / "ds2-half", mx.deepseek_config(mtp=2), mtp=(2,), copies=True),
        "glm-renamed": _renamed(d / "glm-renamed"),
        "unannounced": mx.write_target(d / "unannounced", mx.glm_config(mtp=0), mtp=(2,)),
    }


def _renamed(d: Path) -> Path:
    """GLM's MTP layer written as mtp.layers.0.* (another model's layout): vLLM's GLM class reads model.layers.2.*."""
    from conftest import write_checkpoint

    cfg = mx.glm_config()
    t = mx.target_tensors(cfg)
    return write_checkpoint(d, cfg, {k.replace("model.layers.2.", "mtp.layers.0."): v for k, v in t.items()})


def test_complete_head_loads_everywhere_without_findings(targets):
    rc, body = check(targets["glm"], "vllm==0.32.0", "vllm==0.16.0", "sglang==0.5.23")
    assert rc == 0, body
    assert body["family"]["name"] == "mtp"
    assert body["mtp"]["found"] == 1 and body["mtp"]["layers"][0]["index"] == 2
    for name, r in results(body).items():
        assert not codes(r, "error"), (name, r["findings"])
        assert not r["load"]["missing"] and not r["load"]["dropped"], name


def test_head_announced_but_absent_raise_or_garbage_per_release(targets):
    """vllm #35548: GLM-5 (glm_moe_dsa → DeepSeekMTP) NVFP4 without MTP weights served garbage before 0.17.0 and is refused
    from 0.17.0 (the completeness check); an unquantized target is refused by the loader's own check in every release."""
    rc, body = check(targets["glm5-nvfp4-nohead"], "vllm==0.16.0", "vllm==0.20.0", "vllm==0.29.0")
    assert rc == 1
    r = results(body)
    for v in ("vllm==0.16.0", "vllm==0.20.0", "vllm==0.29.0"):
        assert {"M001", "L002"} <= codes(r[v], "error"), v
    assert not r["vllm==0.16.0"]["load"]["errors"]  # silent: torch.empty in the head, accept ≈ 0
    assert any("MTP speculative decoding layer 2 weights missing" in e for e in r["vllm==0.20.0"]["load"]["errors"])
    assert any("MTP speculative decoding layer 2 weights missing" in e for e in r["vllm==0.29.0"]["load"]["errors"])
    # GLM-4.5's class has no completeness check in any release: a quantized target without its head is silent garbage
    rc, body = check(targets["glm-fp8-nohead"], "vllm==0.32.0", "sglang==0.5.23")
    for name, r in results(body).items():
        assert {"M001", "L002"} <= codes(r, "error") and not r["load"]["errors"], name
    # unquantized: vLLM's DefaultModelLoader names the plain parameters nothing filled
    rc, body = check(targets["glm-nohead"], "vllm==0.32.0")
    assert any(e.startswith("ValueError: Following weights were not initialized") for e in body["load"]["errors"])


def test_glm5_on_a_release_with_another_class_is_said_not_checked(targets):
    """vLLM 0.32.0 builds GLM-5's head with vllm/models/deepseek_v32, which no row models: that release is named as not
    checked, the others are answered."""
    rc, body = check(targets["glm5-nvfp4-nohead"], "vllm==0.32.0", "vllm==0.29.0")
    assert list(results(body)) == ["vllm==0.29.0"]
    assert any("deepseek_v32" in line for line in body["not_checked"])
    # only that release asked: what the files alone say (the head is absent: M001), and exit 1 for it
    r = run_cli("check", str(targets["glm5-nvfp4-nohead"]), "--engine", "vllm==0.32.0")
    assert r.returncode == 1 and "does not model that class yet" in r.stderr and "M001 error" in r.stdout


def test_one_of_two_layers_absent(targets):
    rc, body = check(targets["ds2-half"], "vllm==0.32.0", "sglang==0.5.23")
    r = results(body)
    assert "M002" in codes(r["vllm==0.32.0"], "error")
    assert any("layer 3 weights missing" in e for e in r["vllm==0.32.0"]["load"]["errors"])
    # SGLang's NextN classes read one layer: two announced is an assertion at start-up
    assert any("Only 1 nextn layer is supported" in e for e in r["sglang==0.5.23"]["load"]["errors"])


def test_renamed_keys_are_dropped_and_the_head_left_empty(targets):
    rc, body = check(targets["glm-renamed"], "vllm==0.32.0")
    assert rc == 1
    assert any(n.startswith("mtp.layers.0.") for n in body["load"]["dropped"])
    assert {"L002", "L006"} <= codes(body, "error")  # L002 names the dropped tensors with the parameters they left empty


def test_quantized_target_with_an_unquantized_head(targets):
    """sglang #35797 / vllm #37667: the head is built with the target's quantization; an ignore list that does not name
    its modules builds them quantized over bf16 tensors (scales never written: accept ≈ 0, no error). vLLM's GLM MTP
    class has no packed_modules_mapping, so naming q/k/v and gate/up one by one still builds qkv_proj and gate_up_proj
    quantized (conformance 'fp8-mtp-unquantized-ignored-modules'); naming the fused modules fixes vLLM. SGLang matches
    its own module names (model.decoder.*), so neither list reaches its NextN layer."""
    rc, body = check(targets["glm-fp8-bf16head"], "vllm==0.32.0", "sglang==0.5.23")
    for name, r in results(body).items():
        hit = [f for f in r["findings"] if f["code"] == "M004"]
        assert hit and hit[0]["severity"] == "error" and "quantized" in hit[0]["message"], name
    rc, body = check(targets["glm-fp8-ignored"], "vllm==0.32.0", "sglang==0.5.23")
    r = results(body)
    m4 = [f["message"] for f in r["vllm==0.32.0"]["findings"] if f["code"] == "M004"]
    assert m4 and ("qkv_proj" in m4[0] or "gate_up_proj" in m4[0]), m4
    assert "M004" in codes(r["sglang==0.5.23"], "error")
    rc, body = check(targets["glm-fp8-ignored-fused"], "vllm==0.32.0", "sglang==0.5.23")
    r = results(body)
    assert "M004" not in codes(r["vllm==0.32.0"])
    assert "M004" in codes(r["sglang==0.5.23"], "error")


def test_config_that_does_not_announce_the_head(targets):
    rc, body = check(targets["unannounced"], "vllm==0.32.0", extra=("--mtp",))
    assert "M003" in codes(body, "warning")
    assert any("num_nextn_predict_layers is 0 or absent" in e for e in body["load"]["errors"])


def test_launch_steps_against_layers(targets):
    line = 'vllm serve {} --speculative-config \'{{"method":"mtp","num_speculative_tokens":{}}}\''
    rc, body = check(targets["ds2-half"], "vllm==0.32.0", extra=("--launch", line.format(targets["ds2-half"], 3)))
    m5 = [f for f in body["findings"] if f["code"] == "M005"]
    assert m5 and m5[0]["severity"] == "error" and "must be divisible by n_predict=2" in m5[0]["message"]
    rc, body = check(targets["ds"], "vllm==0.32.0", extra=("--launch", line.format(targets["ds"], 2)))
    m5 = [f for f in body["findings"] if f["code"] == "M005"]
    assert m5 and m5[0]["severity"] == "warning", body["findings"]
    # the head launched as EAGLE3 on SGLang builds an EAGLE-3 draft from the target: L014
    sg = f"python -m sglang.launch_server --model-path {targets['ds']} --speculative-algorithm EAGLE3"
    rc, body = check(targets["ds"], "sglang==0.5.23", extra=("--launch", sg))
    assert "L014" in codes(body, "error")
    [l14] = [f for f in body["findings"] if f["code"] == "L014"]  # the fix: the same line with NEXTN
    assert l14["fix"] == "launch with NEXTN: " + sg.replace("EAGLE3", "NEXTN"), l14
    assert "L014" not in codes(check(targets["ds"], "sglang==0.5.23", extra=("--launch", sg.replace("EAGLE3", "NEXTN")))[1], "error")


def test_launch_prints_the_mtp_line_and_refuses_a_missing_head(targets):
    r = run_cli("launch", str(targets["glm"]), "--engine", "vllm==0.32.0", "--steps", "1")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f'vllm serve {targets["glm"]} --speculative-config \'{{"method":"mtp","num_speculative_tokens":1}}\''
    r = run_cli("launch", str(targets["glm"]), "--engine", "sglang==0.5.23", "--steps", "3")
    assert r.returncode == 0, r.stderr
    assert "--speculative-algorithm NEXTN --speculative-num-steps 3" in r.stdout and "--speculative-draft-model-path" not in r.stdout
    r = run_cli("launch", str(targets["glm-nohead"]), "--engine", "vllm==0.32.0", "--steps", "1")
    assert r.returncode == 1 and "M001" in r.stderr
    r = run_cli("launch", str(targets["glm"]), "--engine", "vllm==0.32.0", "--target", str(targets["glm"]))
    assert r.returncode == 2 and "drop --target" in r.stderr


def test_check_reads_only_the_head_shard(targets, tmp_path):
    """A sharded target: check reads config, index and the headers of the shards holding the head (and the target's
    embedding and head, which GLM's MTP loader reads), never the decoder's shards."""
    from conftest import write_checkpoint  # noqa: F401  (same writer family)
    from safetensors.numpy import save_file

    cfg = mx.glm_config()
    t = mx.target_tensors(cfg)
    out = tmp_path / "sharded"
    out.mkdir()
    shards = {"model-00001-of-00003.safetensors": {}, "model-00002-of-00003.safetensors": {}, "model-00003-of-00003.safetensors": {}}
    for k, v in t.items():
        f = (
            "model-00003-of-00003.safetensors"
            if k.startswith("model.layers.2.") or k in ("lm_head.weight",)
            else ("model-00001-of-00003.safetensors" if k == "model.embed_tokens.weight" else "model-00002-of-00003.safetensors")
        )
        shards[f][k] = v
    wmap = {}
    for f, ts in shards.items():
        save_file(ts, str(out / f))
        wmap |= dict.fromkeys(ts, f)
    (out / "config.json").write_text(json.dumps(cfg))
    (out / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": wmap}))
    rc, body = check(out, "vllm==0.32.0")
    assert rc == 0, body["findings"]
    assert body["mtp"]["headers_read"] == 2  # shard 3 (head, lm_head) and shard 1 (embedding); not the decoder's shard 2
