"""The published MTP targets of tests/fixtures/corpus-mtp, rebuilt as header-only sharded targets, checked as a user
would (`specbridge check TARGET --json` on the engine versions of `_expected.json`): each target's exit code, the error
codes per engine version, and the engine versions named as not modelled, against what the engines' source says
(`_expected.json`, each with why). Also a mutation of a published re-quantization: the Qwen3.6 AWQ checkpoint with
mtp.fc left out of its ignore list builds mtp.fc quantized over BF16 weights (vllm #53387)."""

from __future__ import annotations

import json

import corpus_mtp_targets as corpus
import pytest
from conftest import run_cli

EXPECTED = json.loads((corpus.DIR / "_expected.json").read_text())
ENTRIES = {e["id"]: e for e in corpus.entries()}


def _check(path, engines) -> tuple[int, dict]:
    args = ["check", str(path), "--json"]
    for e in engines:
        args += ["--engine", e]
    r = run_cli(*args, timeout=120)
    return r.returncode, json.loads(r.stdout)


def _errors(body: dict) -> dict[str, list[str]]:
    rs = body.get("results") if "results" in body else [body]
    return {
        f"{r['engine']['name']}=={r['engine']['version']}": sorted({f["code"] for f in r["findings"] if f["severity"] == "error"})
        for r in rs
    }


def test_the_expectations_cover_the_corpus():
    assert set(EXPECTED["targets"]) == set(ENTRIES)
    modelled = [k for k, v in EXPECTED["targets"].items() if v["errors"]]
    assert len(modelled) >= 7  # targets some engine release answers for, not only refusals


@pytest.mark.parametrize("model_id", sorted(ENTRIES))
def test_published_target(model_id, tmp_path):
    want = EXPECTED["targets"][model_id]
    target = corpus.write_target(ENTRIES[model_id], tmp_path / "t")
    rc, body = _check(target, EXPECTED["engines_asked"])
    assert rc == want["exit"], (model_id, body.get("not_checked"), body.get("findings"))
    assert _errors(body) == {k: sorted(v) for k, v in want["errors"].items()} if want["errors"] else not body.get("results"), model_id
    assert len(body["not_checked"]) == want["not_checked"] if want["errors"] else body["not_checked"], model_id
    assert body["family"]["name"] == "mtp"


def test_awq_without_mtp_fc_in_its_ignore_list(tmp_path):
    entry = json.loads(json.dumps(ENTRIES["philbert440/Qwen3.6-27B-Uncensored-Aggressive-W4A16-AWQ"]))
    q = entry["config"].get("quantization_config") or entry["config"]["text_config"]["quantization_config"]
    assert "mtp.fc" in q["ignore"]
    q["ignore"] = [e for e in q["ignore"] if e != "mtp.fc"]
    rc, body = _check(corpus.write_target(entry, tmp_path / "t"), ["vllm==0.32.0"])
    m4 = [f for f in body["findings"] if f["code"] == "M004"]
    assert rc == 1 and m4 and "mtp.fc" in m4[0]["message"], body["findings"]
