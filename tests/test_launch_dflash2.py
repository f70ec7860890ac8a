"""`launch` for DFlash2 and DSpark drafters, and what each engine says of them.

vLLM serves a DFlash2 drafter with method dflash (its DFlash2DraftModel architecture picks the class) and a DSpark
drafter with method dspark, num_speculative_tokens = block_size - 1 and block_size (DSpark's N queries are the whole
block); both draft as trained only on Model Runner V2, so the printed line starts `env VLLM_USE_V2_MODEL_RUNNER=1`
(the LAUNCH row's runner_env). The printed line, parsed back by check, gives no launch finding. SGLang has DSpark
from 0.5.16 (its DSPARK line: tests/test_launch_dspark_sglang.py) and DFlash2 from 0.5.19: before those releases check
says L005 (exit 1). TensorRT-LLM has no DFlash2 line: launch says nothing was checked."""

from __future__ import annotations

import json
import shlex

import dflash_fixtures as df
import pytest
from conftest import TINY_TARGET, run_cli

from specbridge.bench.sweep import Setting, server_command
from specbridge.cli.commands import drafter_launch
from specbridge.cli.targets import open_target_arg
from specbridge.engines.launch import build_launch, parse_launch, runner_env, with_interpreter, without_speculation
from specbridge.engines.registry import LAUNCHERS, SERVERS, family_rows, placements
from specbridge.families.table import FAMILIES
from specbridge.rules.check import check_family
from specbridge.view import open_view

BLOCK = df.config()["block_size"]
FAMILY = {f.name: f for f in FAMILIES}
LAUNCH_CODES = {"D005", "D006", "D007", "L014", "C008"}
V2 = LAUNCHERS["vllm"].runner_env["V2"]


@pytest.fixture(scope="module")
def drafters(tmp_path_factory):
    root = tmp_path_factory.mktemp("df2")
    return {
        "dflash2": df.write(root / "dflash2", df.config2(), df.tensors2()),
        "dspark": df.write(root / "dspark", df.config_dspark(), df.tensors_dspark()),
    }


def vllm_line(draft, method: str, k: int | None, env: str | None = V2) -> str:
    spec = {"method": method, "model": str(draft)} | ({} if k is None else {"num_speculative_tokens": k})
    head = ["env", env] if env else []
    return shlex.join(head + ["vllm", "serve", str(TINY_TARGET), "--speculative-config", json.dumps(spec, separators=(",", ":"))])


def findings(draft, family: str, engine: str, line: str | None) -> list:
    """check's findings for the drafter with a launch line (the library path `check --launch` takes)."""
    results, _ = check_family(
        open_view(draft), engine, FAMILY[family], str(draft), target=open_target_arg(TINY_TARGET), launch=line and parse_launch(line)
    )
    [res] = results
    return res.findings


# --- the line vLLM is given ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "family,engine,method,k",
    [
        ("dflash2", "vllm==0.28.0", "dflash", BLOCK - 1),  # V2 forced for DFlash2 unless the variable says otherwise
        ("dflash2", "vllm==0.29.0", "dflash", BLOCK - 1),  # V1 refuses: the variable keeps V2 where it would fall back
        ("dflash2", "vllm==0.32.0", "dflash", BLOCK - 1),
        ("dspark", "vllm==0.32.0", "dspark", BLOCK),  # the whole block: anchor + N - 1 noise queries
    ],
)
def test_launch_line_for_dflash2_and_dspark_and_check_finds_nothing_in_it(drafters, family, engine, method, k):
    draft = drafters[family]
    view = open_view(draft)
    line, res, fam = drafter_launch(view, engine, str(draft), str(TINY_TARGET), open_target_arg(TINY_TARGET), None, None, None)
    assert fam == family and shlex.split(line) == shlex.split(vllm_line(draft, method, k))
    assert res.ok and res.report.cls.runner == "V2"
    lau = parse_launch(line)
    assert (lau.engine, lau.algorithm, lau.steps, lau.env) == ("vllm", method.upper(), k, {"VLLM_USE_V2_MODEL_RUNNER": "1"})
    # round trip: check has nothing above info on the printed line, and D007 says the line itself picks V2
    got = findings(draft, family, engine, line)
    assert not [f for f in got if f.severity != "info"], [(f.code, f.message) for f in got]
    [d007] = [f for f in got if f.code == "D007"]
    assert f"the launch line selects Model Runner V2 ({V2})" in d007.message
    # the same line without the variable: the info says what V1 would do; with V2 switched off, an error
    [plain] = [f for f in findings(draft, family, engine, vllm_line(draft, method, k, env=None)) if f.code == "D007"]
    assert plain.severity == "info" and "on V1:" in plain.message
    [off] = [f for f in findings(draft, family, engine, vllm_line(draft, method, k, env="VLLM_USE_V2_MODEL_RUNNER=0")) if f.code == "D007"]
    assert off.severity == "error"


def test_cli_launch_and_check_launch_round_trip(drafters):
    draft = drafters["dspark"]
    r = run_cli("launch", draft, "-e", "vllm==0.32.0", "--target", TINY_TARGET)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    line = r.stdout.strip()
    assert shlex.split(line) == shlex.split(vllm_line(draft, "dspark", BLOCK))
    back = run_cli("check", draft, "-e", "vllm==0.32.0", "--target", TINY_TARGET, "--launch", line, "--json")
    body = json.loads(back.stdout)
    assert back.returncode == 0, back.stdout
    assert not [f for f in body["findings"] if f["severity"] != "info" or (f["code"] in LAUNCH_CODES - {"D007"})]


def test_a_dflash2_release_before_its_class_is_refused(drafters):
    r = run_cli("launch", drafters["dflash2"], "-e", "vllm==0.27.0", "--target", TINY_TARGET)
    assert r.returncode == 1 and r.stdout == ""
    assert "L005" in r.stderr and "has no DFlash2 drafter class (the first release with one is 0.28.0)" in r.stderr


# --- DSpark's block rows (D005, D006) ----------------------------------------------------------------------------------


def test_dspark_num_speculative_tokens_against_its_block(tmp_path, drafters):
    draft, e = drafters["dspark"], "vllm==0.32.0"

    def launch_codes(line):
        return [(f.code, f.severity, f.message, f.fix) for f in findings(draft, "dspark", e, line) if f.code in ("D005", "D006")]

    [(code, sev, msg, fix)] = launch_codes(vllm_line(draft, "dspark", BLOCK - 1))
    assert (code, sev) == ("D005", "warning") and f"drafts {BLOCK - 1} of the {BLOCK} positions" in msg
    assert f'"num_speculative_tokens": {BLOCK}' in fix  # the DSpark line's own steps, not DFlash's block - 1
    [(code, sev, msg, _)] = launch_codes(vllm_line(draft, "dspark", BLOCK + 2))
    assert (code, sev) == ("D005", "warning") and "above the drafter's trained block" in msg
    assert launch_codes(vllm_line(draft, "dspark", None)) == []  # vLLM takes block_size
    cfg = df.config_dspark()
    del cfg["block_size"]
    blockless = df.write(tmp_path / "blockless", cfg, df.tensors_dspark())
    [missing] = [f for f in findings(blockless, "dspark", e, vllm_line(blockless, "dspark", None)) if f.code == "D006"]
    assert missing.severity == "error" and "num_speculative_tokens` was not provided" in missing.message
    assert [f.code for f in findings(blockless, "dspark", e, vllm_line(blockless, "dspark", 3)) if f.code in ("D005", "D006")] == []


# --- SGLang: DSpark's class ships and is modelled from 0.5.16 (rows: tests/test_sglang_dspark.py) ----------------------


@pytest.mark.parametrize("family,first", [("dspark", "0.5.16")])
def test_sglang_says_which_release_first_has_the_class(family, first):
    rows = family_rows("sglang", family)
    assert rows[0].first == first and all(r.classes and not r.unmodelled and r.begins for r in rows)
    title = FAMILY[family].title  # the release before `first`: L005 naming it (test_sglang_cli_exit_codes)
    for spec in (f"sglang=={first}", "sglang==0.5.22", "sglang"):
        places, _skipped = placements(spec, family, title)
        assert {p.era.engine for p in places} == {"sglang"}
    places, _skipped = placements("all", family, title)
    assert {p.era.engine for p in places} >= {"vllm", "sglang"}


def test_sglang_cli_exit_codes(drafters):
    r = run_cli("check", drafters["dspark"], "-e", "sglang==0.5.15", "--target", TINY_TARGET)
    out = " ".join(r.stdout.split())
    assert r.returncode == 1 and "L005 error" in out and "0.5.15 has no DSpark drafter class (the first release with one is 0.5.16" in out
    r = run_cli("check", drafters["dspark"], "-e", "sglang==0.5.20", "--target", TINY_TARGET)
    assert r.returncode == 0, r.stdout
    # SGLang's DSPARK launch line (tests/test_launch_dspark_sglang.py), never a DFLASH line
    r = run_cli("launch", drafters["dspark"], "-e", "sglang==0.5.23", "--target", TINY_TARGET)
    assert r.returncode == 0 and "--speculative-algorithm DSPARK" in r.stdout, r.stderr
    r = run_cli("launch", drafters["dflash2"], "-e", "sglang==0.5.23", "--target", TINY_TARGET)
    assert r.returncode == 0 and "--speculative-algorithm DFLASH" in r.stdout, r.stderr


# --- what serve and sweep start ----------------------------------------------------------------------------------------


def test_serve_and_sweep_keep_the_runner_variable(drafters):
    """`env NAME=value` stays in front: --python replaces the program after it, the sweep's baseline keeps it."""
    draft = str(drafters["dspark"])
    env = runner_env("vllm", "V2")
    assert env == (V2,) and runner_env("vllm", "") == () and runner_env("sglang", "V2") == ()
    argv = shlex.split(build_launch("vllm", str(TINY_TARGET), draft, BLOCK, 1, None, family="dspark", env=env))
    assert argv[:2] == ["env", V2] and argv[2:4] == ["vllm", "serve"]
    python = "/opt/venv/bin/python"
    prefix, replacement = SERVERS["vllm"].interpreter
    assert with_interpreter("vllm", argv, python) == ["env", V2] + [w.format(python=python) for w in replacement] + argv[2 + len(prefix) :]
    assert without_speculation("vllm", argv) == ["env", V2, "vllm", "serve", str(TINY_TARGET)]
    cmd = server_command("vllm", None, str(TINY_TARGET), draft, 8123, Setting(BLOCK), [], family="dspark", env=env)
    assert cmd[: len(argv)] == argv
    base = server_command("vllm", None, str(TINY_TARGET), draft, 8123, Setting(None), [], family="dspark", env=env)
    assert base[:5] == ["env", V2, "vllm", "serve", str(TINY_TARGET)] and "--speculative-config" not in base


def test_trtllm_has_no_dflash2_line(drafters):
    """TensorRT-LLM's LAUNCH row has DFlash and DSpark lines (tests/test_trtllm_launch.py) but no DFlash2: no DFlash2
    class is modelled there, so launch says nothing was checked rather than print a line."""
    assert "dflash2" not in LAUNCHERS["trtllm"].families
    r = run_cli("launch", drafters["dflash2"], "-e", "trtllm==1.3.0", "--target", TINY_TARGET)
    assert r.returncode == 2 and "does not model DFlash2 drafters on trtllm" in r.stderr
