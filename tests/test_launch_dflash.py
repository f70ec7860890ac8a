"""`launch` for a DFlash drafter, and check's DFlash launch-flag rules (D005, D006).

The two-layer DFlash fixture (tests/dflash_fixtures.py, trained block_size 4) gets the line each engine release
serves it with: vLLM `method: dflash` with num_speculative_tokens = block_size - 1, SGLang `DFLASH` with
--speculative-num-draft-tokens = block_size. The printed line, parsed back by `check --launch`, gives no finding;
lines that draft another block, or carry flags the engine refuses or overrides, give D005/D006; a release before
the engine's first DFlash class exits 1 naming that release; `serve` and `sweep` start the printed line."""

from __future__ import annotations

import json
import os
import shlex

import dflash_fixtures as df
import pytest
from conftest import TINY_TARGET, run_cli

from specbridge.engines.launch import parse_launch
from specbridge.engines.registry import LAUNCHERS, SERVERS, family_rows
from specbridge.families.table import FAMILIES
from specbridge.rules.check import check_family
from specbridge.view import open_view

BLOCK = df.config()["block_size"]
DFLASH = next(f for f in FAMILIES if f.name == "dflash")
LAUNCH_CODES = {"D005", "D006", "L014", "C008"}


@pytest.fixture(scope="module")
def drafter(tmp_path_factory):
    return df.write(tmp_path_factory.mktemp("dflash") / "draft")


def vllm_line(draft, k: int | None, method: str = "dflash") -> str:
    spec = {"method": method, "model": str(draft)} | ({} if k is None else {"num_speculative_tokens": k})
    return shlex.join(["vllm", "serve", str(TINY_TARGET), "--speculative-config", json.dumps(spec, separators=(",", ":"))])


def sglang_line(draft, *flags: str) -> str:
    head = ["python", "-m", "sglang.launch_server", "--model-path", str(TINY_TARGET), "--speculative-algorithm", "DFLASH"]
    return shlex.join(head + ["--speculative-draft-model-path", str(draft), *flags])


def findings(draft, engine: str, line: str) -> list:
    """check's findings above info for the drafter with a launch line (the library path `check --launch` takes)."""
    from specbridge.cli.targets import open_target_arg

    results, _ = check_family(open_view(draft), engine, DFLASH, str(draft), target=open_target_arg(TINY_TARGET), launch=parse_launch(line))
    [res] = results
    return [f for f in res.findings if f.severity != "info"]


# --- the line each engine release prints ----------------------------------------------------------------------------


@pytest.mark.parametrize("engine", ["vllm==0.27.0", "vllm==0.29.0", "vllm==0.32.0", "sglang==0.5.19", "sglang==0.5.20", "sglang==0.5.23"])
def test_launch_prints_the_dflash_line_and_check_finds_nothing_in_it(drafter, engine):
    r = run_cli("launch", drafter, "-e", engine, "--target", TINY_TARGET)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    line = r.stdout.strip()
    if engine.startswith("vllm"):
        want = vllm_line(drafter, BLOCK - 1)  # the block's mask slots: vLLM never reads block_size itself
    else:
        want = sglang_line(drafter, "--speculative-num-draft-tokens", str(BLOCK))  # SGLang's window is the whole block
    assert shlex.split(line) == shlex.split(want)
    assert parse_launch(line).algorithm == "DFLASH"
    # round trip: the printed line, given back to check, is a line check has nothing to say about
    assert findings(drafter, engine, line) == []
    back = run_cli("check", drafter, "-e", engine, "--target", TINY_TARGET, "--launch", line, "--json")
    body = json.loads(back.stdout)
    assert back.returncode == 0 and not [f for f in body["findings"] if f["code"] in LAUNCH_CODES or f["severity"] != "info"]


def test_sglang_before_0_5_17_needs_num_target_layers_and_then_prints_its_line(tmp_path, drafter):
    """SGLang 0.5.11-0.5.16 check target_layer_ids against the draft's own layer count unless num_target_layers is
    given (the class row's raise): launch refuses the fixture there, and prints the line once the config says it."""
    r = run_cli("launch", drafter, "-e", "sglang==0.5.11", "--target", TINY_TARGET)
    assert r.returncode == 1 and "L006" in r.stderr and "out-of-range layer id" in r.stderr
    cfg = df.config(dflash_config={"target_layer_ids": df.TARGET_IDS, "mask_token_id": df.MASK_ID, "num_target_layers": 4})
    fixed = df.write(tmp_path / "ntl", cfg)
    r = run_cli("launch", fixed, "-e", "sglang==0.5.11", "--target", TINY_TARGET)
    assert r.returncode == 0, r.stderr
    assert shlex.split(r.stdout) == shlex.split(sglang_line(fixed, "--speculative-num-draft-tokens", str(BLOCK)))


@pytest.mark.parametrize("engine,first", [("vllm==0.19.1", "0.20.0"), ("sglang==0.5.10", "0.5.11")])
def test_a_release_before_dflash_exits_1_naming_the_first_release(drafter, engine, first):
    name = engine.split("==")[0]
    assert family_rows(name, "dflash")[0].first == first  # the rows' own first release
    r = run_cli("launch", drafter, "-e", engine, "--target", TINY_TARGET)
    assert r.returncode == 1 and r.stdout == ""
    assert "L005" in r.stderr and f"has no DFlash drafter class (the first release with one is {first})" in r.stderr


def test_steps_given_are_printed_and_warned_about(drafter):
    r = run_cli("launch", drafter, "-e", "vllm==0.32.0", "--target", TINY_TARGET, "--steps", "1")
    assert r.returncode == 0 and shlex.split(r.stdout) == shlex.split(vllm_line(drafter, 1))
    assert "D005 warning" in r.stderr and "accepts at most 1 + 1 tokens" in r.stderr
    r = run_cli("launch", drafter, "-e", "sglang==0.5.23", "--target", TINY_TARGET, "--steps", str(BLOCK + 1))
    assert r.returncode == 0 and shlex.split(r.stdout) == shlex.split(
        sglang_line(drafter, "--speculative-num-draft-tokens", str(BLOCK + 2))
    )
    assert "D005 warning" in r.stderr and "above the drafter's block_size" in r.stderr


def test_a_tree_or_a_missing_block_is_refused(tmp_path, drafter):
    r = run_cli("launch", drafter, "-e", "sglang==0.5.23", "--target", TINY_TARGET, "--topk", "2")
    assert r.returncode == 2 and "drafts one block, not a tree" in r.stderr
    cfg = df.config()
    del cfg["block_size"]
    blockless = df.write(tmp_path / "blockless", cfg)
    r = run_cli("launch", blockless, "-e", "vllm==0.32.0", "--target", TINY_TARGET)
    assert r.returncode == 2 and "no block_size" in r.stderr
    r = run_cli("launch", blockless, "-e", "vllm==0.32.0", "--target", TINY_TARGET, "--steps", "5")
    assert r.returncode == 0 and shlex.split(r.stdout) == shlex.split(vllm_line(blockless, 5))


# --- D005 / D006: each engine row, hit by a line ----------------------------------------------------------------------


@pytest.mark.parametrize("engine", ["vllm==0.27.0", "vllm==0.32.0"])
def test_vllm_block_size_against_num_speculative_tokens(drafter, engine):
    [below] = findings(drafter, engine, vllm_line(drafter, 1))
    assert (below.code, below.severity) == ("D005", "warning") and "accepts at most 1 + 1" in below.message
    assert '"num_speculative_tokens": 3' in below.fix and below.to_json()["doc"] == "docs/rules.md#d005"
    [above] = findings(drafter, engine, vllm_line(drafter, BLOCK))
    assert (above.code, above.severity) == ("D005", "warning") and f"above the {BLOCK - 1} mask slots" in above.message
    [missing] = findings(drafter, engine, vllm_line(drafter, None))
    assert (missing.code, missing.severity) == ("D006", "error") and "num_speculative_tokens` was not provided" in missing.message


def test_sglang_block_size_against_draft_tokens_and_its_flags(tmp_path, drafter):
    e = "sglang==0.5.23"
    [below] = findings(drafter, e, sglang_line(drafter, "--speculative-num-draft-tokens", "2"))
    assert (below.code, below.severity) == ("D005", "warning") and "DFLASH block size mismatch" in below.message
    assert f"--speculative-num-draft-tokens {BLOCK}" in below.fix
    [above] = findings(drafter, e, sglang_line(drafter, "--speculative-num-draft-tokens", str(BLOCK + 3)))
    assert above.code == "D005" and "above the drafter's block_size" in above.message
    # no window: SGLang reads block_size from the draft config; the block-size flag alone is the window
    assert findings(drafter, e, sglang_line(drafter)) == []
    assert findings(drafter, e, sglang_line(drafter, "--speculative-dflash-block-size", str(BLOCK))) == []
    [differ] = findings(
        drafter, e, sglang_line(drafter, "--speculative-num-draft-tokens", str(BLOCK), "--speculative-dflash-block-size", "8")
    )
    assert (differ.code, differ.severity) == ("D006", "error") and "they must match" in differ.message
    [zero] = findings(drafter, e, sglang_line(drafter, "--speculative-dflash-block-size", "0"))
    assert (zero.code, zero.severity) == ("D006", "error") and "to be positive" in zero.message
    eagle = findings(
        drafter,
        e,
        sglang_line(drafter, "--speculative-num-draft-tokens", str(BLOCK), "--speculative-num-steps", "3", "--speculative-eagle-topk", "2"),
    )
    assert [(f.code, f.severity) for f in eagle] == [("D006", "warning")] * 2
    assert "overriding speculative_num_steps=3 to 1" in eagle[0].message and "overriding speculative_eagle_topk=2 to 1" in eagle[1].message
    cfg = df.config()
    del cfg["block_size"]
    blockless = df.write(tmp_path / "blockless", cfg)
    [default] = findings(blockless, e, sglang_line(blockless))
    assert default.code == "D005" and "defaults the DFlash block to 16" in default.message


def test_another_method_is_l014_not_a_block_finding(drafter):
    got = findings(drafter, "vllm==0.32.0", vllm_line(drafter, 1, method="eagle3"))
    assert [f.code for f in got] == ["L014"]  # the block rows are for a line that builds the DFlash class


def test_accept_length_2_to_3_where_6_is_published(tmp_path):
    """z-lab/dflash #118 (vllm-project/vllm #42505): a block_size-16 DFlash drafter served by vLLM with
    num_spec_tokens 4 or 16 accepted 2-3 tokens a step where ~6 is published. vLLM never reads block_size: 4 drafts
    4 of the 15 mask slots (a step accepts at most 5), 16 drafts one slot past the trained block."""
    draft = df.write(tmp_path / "b16", df.config(block_size=16))
    [four] = findings(draft, "vllm==0.32.0", vllm_line(draft, 4))
    assert four.code == "D005" and "fills 4 of the 15 mask slots" in four.message and "at most 4 + 1 tokens" in four.message
    assert '"num_speculative_tokens": 15' in four.fix and four.to_json()["doc"] == "docs/rules.md#d005"
    [sixteen] = findings(draft, "vllm==0.32.0", vllm_line(draft, 16))
    assert sixteen.code == "D005" and "above the 15 mask slots" in sixteen.message
    r = run_cli("launch", draft, "-e", "vllm==0.32.0", "--target", TINY_TARGET)
    assert r.returncode == 0 and json.loads(shlex.split(r.stdout)[-1])["num_speculative_tokens"] == 15


def test_every_dflash_launch_row_names_a_code_and_its_source():
    """Each DFlash class's launch rows belong to D005 or D006 and cite the engine source they come from."""
    for engine in LAUNCHERS:
        for row in family_rows(engine, "dflash"):
            for cls in row.classes.values():
                assert cls.launch_checks, (engine, row.first)
                assert {c.code for c in cls.launch_checks} == {"D005", "D006"}
                assert all(c.cite and c.severity in ("error", "warning") for c in cls.launch_checks)


# --- serve and sweep start what launch prints --------------------------------------------------------------------------


def _fake_engines(tmp_path, monkeypatch):
    """A fake `python` and `vllm` first on PATH (the CLI's process inherits it); the file they record their argv in."""
    bin_dir, record = tmp_path / "bin", tmp_path / "argv.txt"
    bin_dir.mkdir()
    for program in ("python", "vllm"):
        fake = bin_dir / program
        fake.write_text(f'#!/bin/sh\n{{ basename "$0"; printf "%s\\n" "$@"; echo ===; }} >> {record}\nexit 3\n')
        fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return record


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_sweep_and_serve_start_what_launch_prints(tmp_path, monkeypatch, drafter, engine):
    """A fake `python`/`vllm` on PATH records its argv and exits: sweep's setting and serve start the printed line
    word for word (then the address and, for sweep, the engine's sweep_flags); sweep's baseline is it without the
    speculative tail."""
    row = SERVERS[engine]
    record = _fake_engines(tmp_path, monkeypatch)
    launch = run_cli("launch", drafter, "-e", engine, "--target", TINY_TARGET)
    assert launch.returncode == 0, launch.stderr
    printed = shlex.split(launch.stdout.strip())
    sweep = run_cli(
        *("sweep", drafter, "-e", engine, "-t", TINY_TARGET, "--steps", BLOCK - 1, "--concurrency", "1"),
        *("--log-dir", tmp_path / "logs", "--phase-timeout", "5"),
        timeout=120,
    )
    assert sweep.returncode == 1 and "the server exited" in sweep.stdout, sweep.stdout + sweep.stderr
    baseline, setting = [r.splitlines() for r in record.read_text().split("===\n") if r]
    for started, line in ((setting, printed), (baseline, printed[: printed.index(row.speculative_from)])):
        port = started[len(line) + 3]
        assert started == line + ["--host", "127.0.0.1", "--port", port, *row.sweep_flags], (started, line)
    record.unlink()
    serve = run_cli(
        *("serve", drafter, "-e", engine, "-t", TINY_TARGET, "--port", "18977", "--log", tmp_path / "s.log"),
        *("--phase-timeout", "5", "--startup-timeout", "10"),
        timeout=120,
    )
    [started] = [r.splitlines() for r in record.read_text().split("===\n") if r]
    assert started == printed + ["--port", "18977"], (serve.stdout, serve.stderr)
