"""Medusa on vLLM (medusa.py) as check reads it: token_map and truncated_vocab_size as load_weights handles them, the
draft vocab aligned to the target's, the heads vLLM builds from num_speculative_tokens against the trained ones (H001,
from --launch), the completeness check that names unfilled head blocks, and fix lines that say what a Medusa
checkpoint needs (a config flag, its own per-head tensors), never an EAGLE-3 conversion. The cases are the
conformance matrix's (tests/medusa_fixtures.py; their real vLLM 0.32.0 outcomes: tests/test_conformance_vllm_medusa.py)."""

from __future__ import annotations

import json

import medusa_fixtures as mf
import pytest
import zoo_fixtures as z
from conftest import TINY_TARGET, run_cli

from specbridge.checkpoint.target import open_target
from specbridge.engines.launch import parse_launch
from specbridge.families.table import BY_NAME
from specbridge.rules.check import check
from specbridge.view import open_view

V32 = "vllm==0.32.0"


def launch(k: int | None) -> str:
    spec = {"method": "medusa", "model": "D"} | ({"num_speculative_tokens": k} if k is not None else {})
    return f"vllm serve T --speculative-config '{json.dumps(spec)}'"


def run(tmp_path, case: str, engine: str = V32, k: int | None = mf.K, target=TINY_TARGET, cfg=None, ts=None):
    c, t = mf.cases()[case]
    path = z.write(tmp_path / case, cfg or c, ts or t)
    (res,) = check(
        open_view(path),
        engine,
        target=open_target(target) if target else None,
        launch=parse_launch(launch(k)),
        family=BY_NAME["medusa"],
    )
    return res


def found(res, severity: str | None = None) -> dict[str, list]:
    out: dict[str, list] = {}
    for f in res.findings:
        if severity is None or f.severity == severity:
            out.setdefault(f.code, []).append(f)
    return out


@pytest.mark.parametrize(
    ("case", "words"),
    [
        ("truncated-no-token-map", "needs a token_map tensor"),
        ("token-map-per-head", "loads only with original_lm_head"),
        ("token-map-original-head", "{'token_map'}"),
    ],
)
def test_a_reduced_vocabulary_raises_as_medusa_py_does(tmp_path, case, words):
    """truncated_vocab_size < vocab_size: without token_map load_weights asserts; with it each per-head lm_heads.N is
    gathered to the mapped rows and VocabParallelEmbedding's loader asserts the full row count; with original_lm_head
    the head loads but token_map, a parameter load_weights does not report, is named by the completeness check. Real
    vLLM 0.32.0 raises in all three (the conformance matrix)."""
    res = run(tmp_path, case)
    assert not res.ok and any(words in e for e in res.report.errors), res.report.errors
    assert [f.message for f in found(res, "error")["L006"] if words in f.message]


def test_a_token_map_beside_a_full_vocabulary_is_ignored_by_design(tmp_path):
    res = run(tmp_path, "token-map-ignored")
    assert res.ok and [t.name for t in res.report.tensors if t.status == "unused"] == ["token_map"]
    assert "read only when truncated_vocab_size < vocab_size" in found(res)["L008"][0].message


def test_the_draft_vocab_follows_the_targets(tmp_path):
    """FasterDecoding's configs have no vocab_size (MedusaConfig's default 32001): for method medusa vLLM sets the draft's
    vocab to the target's, so heads with the target's rows load; without --target that cannot be known and the
    default's 32001 rows mismatch. A truncated_vocab_size below a vocab_size that differs from the target's is reset too."""
    c, t = mf.cases()["vllm-names"]
    cfg = {k: v for k, v in c.items() if k != "vocab_size"}
    assert run(tmp_path, "vllm-names", cfg=cfg).ok
    res = run(tmp_path, "vllm-names", cfg=cfg, target=None)
    assert "L003" in found(res, "error") and "32001" in found(res, "error")["L003"][0].message
    res = run(tmp_path, "token-map-per-head", cfg=mf.cases()["token-map-per-head"][0] | {"vocab_size": 1024})
    assert not any("AssertionError" in e for e in res.report.errors)


def test_heads_against_num_speculative_tokens(tmp_path):
    """vLLM builds one head per num_speculative_tokens: above the trained heads the extra blocks are unfilled and the
    load raises (real 0.32.0: ValueError naming blocks.1); below, the other heads are skipped; without it vLLM
    refuses the speculative config. The same checkpoint launched with its own head count is clean."""
    h = found(run(tmp_path, "one-head-k2"))["H001"]
    assert h[0].severity == "error" and "Following weights were not initialized" in h[0].message and "num_speculative_tokens 1" in h[0].fix
    h = found(run(tmp_path, "three-heads-k2"))["H001"]
    assert h[0].severity == "warning" and "2 of the 3 trained" in h[0].message
    h = found(run(tmp_path, "vllm-names", k=None))["H001"]
    assert h[0].severity == "error" and "num_speculative_tokens` was not provided" in h[0].message
    assert "H001" not in found(run(tmp_path, "vllm-names")) and "H001" not in found(run(tmp_path, "three-heads-k2", k=3))


def test_unfilled_head_blocks_raise_and_unfilled_heads_stay_random(tmp_path):
    """The blocks are plain nn.Linear: DefaultModelLoader names them when nothing filled them (real 0.32.0 raises on
    medusa_head.N.* names). The lm_heads are ParallelLMHead, exempt from that check: a missing one stays random."""
    res = run(tmp_path, "hf-medusa-head-names")
    assert res.report.errors == [
        "ValueError: Following weights were not initialized from checkpoint: {blocks.0.layers.0.weight, blocks.1.layers.0.weight}"
    ]
    ts = {k: v for k, v in mf.cases()["vllm-names"][1].items() if k != "lm_heads.1.weight"}
    res = run(tmp_path, "vllm-names", ts=ts)
    assert not res.report.errors and res.report.missing == ["lm_heads.1.weight"]


def test_fix_lines_are_medusas_not_eagle3s(tmp_path):
    """A Medusa finding never points at an EAGLE-3 conversion: dropped biases say the config flag that builds them, a
    missing head says to ship its own trained tensor, the rest name Medusa's tables and that convert does not write
    Medusa heads."""
    res = run(tmp_path, "old-layout")
    (l001,) = found(res, "error")["L001"]
    assert l001.fix == 'set "medusa_fc_bias": true in config.json: Medusa builds these biases only then'
    ts = {k: v for k, v in mf.cases()["vllm-names"][1].items() if k != "lm_heads.1.weight"}
    (l002,) = found(run(tmp_path, "vllm-names", ts=ts), "error")["L002"]
    assert "ship the trained lm_heads.1.weight" in l002.fix and "convert" not in l002.fix
    for f in found(run(tmp_path, "hf-medusa-head-names")).values():
        for x in f:
            assert "--target T" not in (x.fix or "") and "specbridge convert PATH" not in (x.fix or "")
    assert "does not write Medusa heads" in found(run(tmp_path, "hf-medusa-head-names"))["L006"][0].fix
    r = run_cli("check", z.write(tmp_path / "cli", *mf.cases()["old-layout"]), "--engine", V32)
    assert r.returncode == 1 and "medusa_fc_bias" in r.stdout and "EAGLE-3" not in r.stdout
