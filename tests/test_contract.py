"""One JSON contract and one exit-code table for every command (src/specbridge/cli/contract.py, docs/ci.md):
each command with --json run on an answer, a refused request and a usage error; `eval --engine` refusing
exactly what `check --engine` says the engine raises on; R004 said by check, eval and launch."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ALL_PRODUCERS, STORY, run_cli

from specbridge.cli.contract import COMMON_KEYS, EXIT_CODES, JSON_COMMANDS
from specbridge.view import open_view

REPO = Path(__file__).resolve().parents[1]
SMOL = REPO / "examples" / "smollm2-drafter"  # speculators config: no SGLang release dispatches it (L005)


def contract_json(args: list, expect_rc: int, schema: str) -> dict:
    """Run one command with --json; check the keys, the exit code and the error object against the contract."""
    r = run_cli(*args, "--json", timeout=120)
    assert r.returncode == expect_rc and r.returncode in EXIT_CODES, (args, r.returncode, r.stdout[-800:], r.stderr[-800:])
    obj = json.loads(r.stdout)  # one object, strict JSON
    assert list(obj)[: len(COMMON_KEYS)] == list(COMMON_KEYS), (args, list(obj)[:6])
    assert obj["schema"] == f"specbridge.{schema}/2" and obj["specbridge_version"]
    assert obj["ok"] is (r.returncode == 0), args
    err = obj["error"]
    if r.returncode in (2, 3) or schema == "error":
        assert err is not None, args
    if err is not None:
        assert set(err) == {"exit_code", "message"} and err["exit_code"] == r.returncode and err["message"], err
        assert err["message"] in r.stderr, (err, r.stderr)
    if schema == "error":
        assert r.stderr.strip().splitlines() == [f"specbridge: error: {err['message']}"], r.stderr
    return obj


ANSWERS = [  # (args, exit code, schema): the command answers, favourably or not
    (["inspect", STORY], 0, "inspect"),
    (["check", STORY, "-e", "vllm==0.32.0"], 0, "check"),
    (["check", STORY, "-e", "sglang==0.5.11"], 1, "check"),  # findings: an answer, error null
    (["check", STORY], 1, "check"),  # --engine all
    (["launch", STORY, "-e", "vllm", "-t", "org/model"], 0, "launch"),
    (["launch", STORY, "-e", "sglang==0.5.11", "-t", "org/model"], 1, "launch"),
    (["engines"], 0, "engines"),
    (["eval", SMOL, "-t", "smollm2-135m", "-e", "sglang==0.5.11"], 1, "eval"),  # refused from the headers: no torch needed
]
REFUSED = [  # (args, exit code): no answer; the error object under the error schema
    (["inspect", "/nonexistent/drafter"], 2),
    (["check", STORY, "-e", "sglang==0.1"], 2),
    (["check", STORY, "--fail-on", "Z999"], 2),
    (["convert", STORY], 2),  # neither --to nor --engine
    (["launch", STORY, "-e", "vllm", "-t", "org/model", "--steps", "0"], 2),  # a value out of range, refused at the door
    (["launch", STORY, "-e", "sglang", "-t", "org/model", "--topk", "2", "--draft-tokens", "1"], 2),
    (["train", "--out", "/nonexistent-dir/out", "--num-prompts", "0"], 2),  # 0 is no "default" and no "all"
    (["launch", STORY, "-e", "trtllm", "-t", "org/model", "--topk", "2"], 2),  # trtllm-serve drafts a chain
    (["eval", STORY, "-t", "smollm2-135m", "--steps", "0"], 2),
    (["eval", STORY, "-t", "smollm2-135m", "-e", "all"], 2),
    (["bench", "--url", "ftp://127.0.0.1:1"], 2),
    (["sweep", STORY, "-e", "nosuch", "-t", "org/model"], 2),
    (["verify", STORY, "-e", "vllm", "--python", "/no/such/python"], 2),
]


@pytest.mark.parametrize("args,rc,schema", ANSWERS, ids=[" ".join(map(str, a[0][:1] + a[0][2:])) for a in ANSWERS])
def test_every_answer_keeps_the_contract(args, rc, schema):
    contract_json(args, rc, schema)


@pytest.mark.parametrize("args,rc", REFUSED, ids=[" ".join(map(str, a[0][:1] + a[0][2:])) for a in REFUSED])
def test_every_refusal_is_the_error_object(args, rc):
    contract_json(args, rc, "error")


@pytest.mark.parametrize("command", [*JSON_COMMANDS, "train", "serve"])
def test_usage_errors_of_every_command(command):
    """An unknown option under --json: the error object, its message the one line on stderr, exit 2."""
    obj = contract_json([command, "--no-such-option"], 2, "error")
    assert obj["error"]["message"].endswith(f" (see specbridge {command} --help)")


@pytest.mark.parametrize("command", ["check", "eval", "serve"])  # the fast path, a typer command, one with required options
def test_a_usage_error_is_one_line(command):
    r = run_cli(command, "--no-such-option")
    assert r.returncode == 2 and r.stdout == ""
    [line] = r.stderr.splitlines()  # click may name a missing required option first (serve)
    assert line.startswith("specbridge: error: ") and line.endswith(f" (see specbridge {command} --help)"), line


def test_an_unknown_command_is_one_line_and_a_bare_specbridge_prints_the_help():
    r = run_cli("nosuch")
    assert r.returncode == 2 and r.stderr.splitlines() == ["specbridge: error: No such command 'nosuch' (see specbridge --help)"]
    r = run_cli()
    assert r.returncode == 2 and "Usage" in r.stdout + r.stderr and "inspect" in r.stdout + r.stderr


def test_json_commands_are_the_commands_with_json():
    """JSON_COMMANDS (and so docs/ci.md) lists exactly the commands that take --json."""
    import typer

    from specbridge.cli.main import app

    group = typer.main.get_command(app)
    with_json = {name for name, cmd in group.commands.items() if any("--json" in p.opts for p in cmd.params)}
    assert with_json == set(JSON_COMMANDS)
    cli_row = next(line for line in (REPO / "docs" / "cli.md").read_text().splitlines() if line.startswith("| machine-readable output"))
    assert cli_row.split("|")[3].strip() == ", ".join(JSON_COMMANDS)


def test_ci_page_is_generated_from_the_contract():
    r = subprocess.run([sys.executable, str(REPO / "scripts" / "gen_ci_doc.py"), "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    text = (REPO / "docs" / "ci.md").read_text()
    for code, meaning in EXIT_CODES.items():
        assert f"| {code} | {meaning} |" in text


def test_bench_answers_and_failures_keep_the_contract():
    pytest.importorskip("httpx", reason="bench needs the bench extra (httpx)")
    from test_bench import _dead_port, fake_process

    with fake_process("ok") as srv:
        obj = contract_json(
            ["bench", "--url", srv.url, "--concurrency", "1", "--num-prompts", "2", "--max-tokens", "4", "--no-progress"], 0, "bench"
        )
    assert obj["error"] is None
    url = f"http://127.0.0.1:{_dead_port()}"
    obj = contract_json(["bench", "--url", url, "--timeout", "3", "--no-progress"], 1, "bench")
    assert "cannot connect" in obj["error"]["message"] and url in obj["error"]["message"]


# --- eval --engine agrees with check --engine ----------------------------------------------------------


def test_eval_refuses_exactly_what_check_says_the_engine_raises_on():
    """For every fixture and every modelled era: the simulated load raises (what eval refuses on) exactly when
    check reports one of ENGINE_RAISES_CODES as an error, so eval's `refused` names check's codes."""
    from specbridge.rules.check import check
    from specbridge.rules.load import ENGINE_RAISES_CODES

    seen = set()
    for path in [STORY, SMOL, *ALL_PRODUCERS]:
        for res in check(open_view(path), "all"):
            raises = {f.code for f in res.findings if f.severity == "error" and f.code in ENGINE_RAISES_CODES}
            assert bool(res.report.errors) == bool(raises), (path.name, res.report.engine, res.report.version, res.report.errors)
            seen.add(bool(raises))
    assert seen == {True, False}  # both outcomes reached


@pytest.mark.parametrize("drafter,engine,code", [(SMOL, "sglang==0.5.11", "L005"), (SMOL, "trtllm==1.3", "L005")])
def test_eval_refuses_what_check_refuses_in_text_and_json(drafter, engine, code):
    checked = run_cli("check", drafter, "--engine", engine, "--json")
    assert checked.returncode == 1 and code in [f["code"] for f in json.loads(checked.stdout)["findings"]]
    obj = contract_json(["eval", drafter, "-t", "smollm2-135m", "-e", engine], 1, "eval")
    assert obj["refused"].startswith(f"{engine.replace('==', ' ')} refuses to load it ({code})") and obj["mean_accept_length"] is None
    assert code in [f["code"] for f in obj["findings"]] and obj["error"] is None
    r = run_cli("eval", drafter, "-t", "smollm2-135m", "-e", engine)
    assert r.returncode == 1 and f"would not serve this drafter — {obj['refused']}" in r.stdout


# --- R004: a release the tables do not read is said by check, eval and launch --------------------------


def test_R004_in_check_eval_and_launch():
    r = run_cli("check", STORY, "-e", "tensorrt-llm==1.3")
    assert r.returncode == 0 and "R004 warning" in r.stdout and "no source of this release was read" in r.stdout
    obj = contract_json(["eval", SMOL, "-t", "smollm2-135m", "-e", "trtllm==1.3"], 1, "eval")
    assert "R004" in [f["code"] for f in obj["findings"]]
    assert (
        "R004 warning: trtllm 1.3: no source of this release was read"
        in run_cli("eval", SMOL, "-t", "smollm2-135m", "-e", "trtllm==1.3").stderr
    )
    r = run_cli("launch", STORY, "-e", "vllm==0.16.1", "-t", "org/model")
    assert r.returncode == 0 and "R004 warning: vllm 0.16.1: no source of this release was read" in r.stderr
    obj = contract_json(["launch", STORY, "-e", "vllm==0.16.1", "-t", "org/model"], 0, "launch")
    assert "R004" in [f["code"] for f in obj["check"]["findings"]]
    # a release read, and one between two releases read of its era, are not flagged
    for spec in ("vllm==0.16.0", "sglang==0.5.6"):
        obj = contract_json(["check", STORY, "-e", spec], 0 if spec.startswith("vllm") else 1, "check")
        assert "R004" not in [f["code"] for f in obj["findings"]], spec
