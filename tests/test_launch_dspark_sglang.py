"""`launch` and `check --launch` for a DSpark drafter on SGLang (--speculative-algorithm DSPARK, 0.5.16+).

SGLang's DSpark drafts gamma = the drafter's block_size positions per step and verifies gamma + 1: the printed line
carries --speculative-num-draft-tokens block_size + 1 (not DFLASH's block_size), and check finds nothing in it; the
launch rows (DSPARK_SG_LAUNCH, D005/D006) refuse a window that is not gamma + 1 and say what SGLang overrides or logs.
tests/test_conformance_sglang_dspark_launch.py runs SGLang's own _handle_dspark on the same settings."""

from __future__ import annotations

import json
import shlex

import dflash_fixtures as dfx
import pytest
from conftest import TINY_TARGET, run_cli
from test_launch_dflash2 import findings

from specbridge.engines.launch import parse_launch

BLOCK = dfx.config_dspark()["block_size"]


@pytest.fixture(scope="module")
def drafter(tmp_path_factory):
    core = {k: v for k, v in dfx.tensors_dspark().items() if not k.startswith(("embed_tokens.", "lm_head."))}
    return dfx.write(tmp_path_factory.mktemp("sg-dspark") / "dspark", dfx.config_dspark(num_target_layers=4), core)


def line(draft, *flags: str) -> str:
    head = ["python", "-m", "sglang.launch_server", "--model-path", str(TINY_TARGET), "--speculative-algorithm", "DSPARK"]
    return shlex.join(head + ["--speculative-draft-model-path", str(draft), *flags])


def codes(draft, engine: str, text: str) -> list[tuple[str, str, str]]:
    return [(f.code, f.severity, f.message) for f in findings(draft, "dspark", engine, text) if f.code in ("D005", "D006", "L014")]


@pytest.mark.parametrize("engine", ["sglang==0.5.16", "sglang==0.5.20", "sglang==0.5.23"])
def test_launch_prints_the_dspark_line_and_check_finds_nothing_in_it(drafter, engine):
    r = run_cli("launch", drafter, "-e", engine, "--target", TINY_TARGET)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert shlex.split(r.stdout) == shlex.split(line(drafter, "--speculative-num-draft-tokens", str(BLOCK + 1)))
    assert parse_launch(r.stdout).algorithm == "DSPARK"
    back = run_cli("check", drafter, "-e", engine, "--target", TINY_TARGET, "--launch", r.stdout.strip(), "--json")
    body = json.loads(back.stdout)
    assert back.returncode == 0 and not [f for f in body["findings"] if f["severity"] != "info"], body["findings"]


def test_dspark_window_and_flags(drafter):
    e = "sglang==0.5.20"
    assert codes(drafter, e, line(drafter)) == []  # SGLang sets the window to gamma + 1 itself
    [(code, sev, msg)] = codes(drafter, e, line(drafter, "--speculative-num-draft-tokens", str(BLOCK)))  # DFLASH's count
    assert (code, sev) == ("D006", "error") and f"must equal gamma + 1 (gamma={BLOCK}" in msg
    [(code, sev, msg)] = codes(drafter, e, line(drafter, "--speculative-dspark-block-size", "6"))
    assert (code, sev) == ("D005", "warning") and "DSpark gamma mismatch" in msg
    got = codes(drafter, e, line(drafter, "--speculative-dspark-block-size", "6", "--speculative-num-draft-tokens", "5"))
    assert sorted(c[:2] for c in got) == [("D005", "warning"), ("D006", "error")]
    assert [c[:2] for c in codes(drafter, e, line(drafter, "--speculative-dspark-block-size", "0"))] == [("D006", "error")]
    got = codes(drafter, e, line(drafter, "--speculative-num-steps", "3", "--speculative-eagle-topk", "2"))
    assert [c[:2] for c in got] == [("D006", "warning")] * 2 and "speculative_num_steps=3" in got[0][2]
    [(code, sev, msg)] = codes(drafter, e, line(drafter, "--speculative-dflash-block-size", str(BLOCK)))
    assert (code, sev) == ("D006", "warning") and "DFLASH's flag" in msg


def test_a_blockless_dspark_drafter_defaults_to_gamma_7(tmp_path):
    cfg = dfx.config_dspark(num_target_layers=4)
    del cfg["block_size"]
    d = dfx.write(tmp_path / "blockless", cfg, {k: v for k, v in dfx.tensors_dspark().items() if not k.startswith("embed")})
    [(code, sev, msg)] = codes(d, "sglang==0.5.23", line(d))
    assert (code, sev) == ("D005", "warning") and "defaulting to 7" in msg
    assert codes(d, "sglang==0.5.23", line(d, "--speculative-num-draft-tokens", "6")) == []
    assert [c[:2] for c in codes(d, "sglang==0.5.23", line(d, "--speculative-num-draft-tokens", "1"))] == [("D006", "error")]
