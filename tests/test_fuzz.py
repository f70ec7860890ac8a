"""Bounded fuzz run (CI): every mutated fixture ends in a result or a clean refusal, and every human
report of the CLI renders it (exit 0/1/2, never 3), within memory bounds. Length: SPECBRIDGE_FUZZ_INPUTS inputs
(default 60, a few seconds on an idle machine; the same inputs for a seed, SPECBRIDGE_FUZZ_SEED, however loaded
the machine is). Long runs by time: scripts/fuzz.py --seconds N."""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

import fuzz  # noqa: E402
import gen_cli_doc  # noqa: E402


def test_fuzz_reader_config_and_checkers():
    inputs = int(os.environ.get("SPECBRIDGE_FUZZ_INPUTS", "60"))
    s = fuzz.run(None, seed=int(os.environ.get("SPECBRIDGE_FUZZ_SEED", "1")), per_input=5.0, inputs=inputs)
    print({k: v for k, v in s.items() if k != "crash_details"})
    assert s["crashes"] == 0 and s["hangs"] == 0, s["crash_details"]  # a hang: 5 s of CPU (or 60 s of wall) on one input
    assert s["inputs"] == inputs and s["ok"] > 0 and s["refused"] > 0  # the mutations reach both outcomes
    assert s["cli_runs"] == 5 * s["inputs"]  # inspect, check (all eras, two single eras), convert on every input
    assert s["cli_exit"][0] and s["cli_exit"][1] and s["cli_exit"][2]  # reports rendered, findings and refusals all reached
    assert s["rss_growth_mb"] < 256


def test_every_path_option_refuses_bad_paths_at_the_door(tmp_path):
    """Issue #23: every command's path options given missing places, directories for files, files for
    directories, paths under a file and places nobody can write: each is one line naming the path, exit 2
    (1 where launch/serve/sweep refuse a target by contract), before any work (no model loaded, no server
    started, no request sent), never exit 3."""
    from conftest import STORY, TINY_TARGET

    from specbridge.fuzzing import LAUNCH_REFUSED, PATH_OPTIONS, path_refusals

    prompts = tmp_path / "prompts.txt"
    prompts.write_text("hello\n")
    runs = path_refusals(STORY, TINY_TARGET, prompts, tmp_path)
    assert len(runs) >= 3 * len(PATH_OPTIONS)
    for argv, kind, bad, code, err, _seconds in runs:
        command, option_kind = argv.split()[0], kind.split(":")[0]
        want = 1 if (command, option_kind) in LAUNCH_REFUSED else 2
        lines = err.strip().splitlines()
        assert code == want and len(lines) == 1 and lines[0].startswith("specbridge: error: "), (argv, kind, code, err)
        assert bad in lines[0], (argv, kind, lines[0])  # the line names the path
    assert not (tmp_path / "out").exists()  # nothing was written


# 51 numeric options over launch, eval, bench, serve, sweep, train and convert, each given 0 and -1: 102 cases,
# 7 of them a documented legal 0 (--warmup, --max-errors, --seed, --warmup-steps, --save-every, --eval-every,
# --aux-layers; docs/cli.md). An option added or removed changes these numbers: say it here and in docs/cli.md.
NUMERIC_OPTIONS, NUMERIC_CASES, LEGAL_ZEROS = 52, 104, 7


def test_every_numeric_option_refuses_zero_and_negatives_before_any_work(tmp_path):
    """Every numeric option of every command, given 0 and -1: a refusal with one line naming the option, exit 2,
    before the command's body runs (in-process, each body replaced by one that raises: nothing is loaded,
    started, sent or written), never exit 3; a 0 the option's NUMBERS row documents is accepted (the body is
    reached). The cases come from the click commands and the rows, so a new numeric option is tried too."""
    from conftest import STORY, TINY_TARGET

    from specbridge.cli.optspec import NUMBERS
    from specbridge.fuzzing import NUMBER_BASES, number_refusals, numeric_cases, numeric_options

    options, cases = numeric_options(), numeric_cases()
    print(f"{len(options)} numeric options, {len(cases)} (command, option, value) cases, {sum(c[3] for c in cases)} legal")
    assert (len(options), len(cases), sum(c[3] for c in cases)) == (NUMERIC_OPTIONS, NUMERIC_CASES, LEGAL_ZEROS)
    assert {command for command, _ in options} <= set(NUMBER_BASES)  # each has a valid line to try its numbers on
    unruled = [o for o in options if o[1] not in NUMBERS]
    assert not unruled, f"numeric options without an optspec.NUMBERS row: {unruled}"
    assert set(NUMBERS) == {flag for _, flag in options}, "a NUMBERS row no command has"
    runs = number_refusals(STORY, TINY_TARGET, tmp_path)
    assert len(runs) == NUMERIC_CASES
    for argv, legal, code, err, quiet in runs:
        if legal:
            assert code is None, (argv, code, err)  # accepted: the body was reached
            continue
        lines = err.strip().splitlines()
        assert code == 2 and quiet and len(lines) == 1 and lines[0].startswith("specbridge: error: "), (argv, code, err)
        assert argv.split()[-2] in lines[0], (argv, lines[0])  # the line names the option
    assert not (tmp_path / "out").exists() and not (tmp_path / "serve.log").exists()  # nothing was written


def test_a_number_refused_under_json_is_the_error_object(monkeypatch, capsys):
    """Under --json the refusal of a value is the contract's error object on stdout, the same line on stderr
    (in-process: the refusal comes while the line is parsed)."""
    import json

    import pytest
    from conftest import STORY, TINY_TARGET

    from specbridge.cli import entry

    argv = ["launch", str(STORY), "-e", "sglang", "-t", str(TINY_TARGET), "--topk", "2", "--draft-tokens", "1", "--json"]
    monkeypatch.setattr("sys.argv", ["specbridge", *argv])
    with pytest.raises(SystemExit) as exit_:
        entry.main()
    out, err = capsys.readouterr()
    obj = json.loads(out)
    assert exit_.value.code == 2 and obj["error"] == {"exit_code": 2, "message": obj["error"]["message"]}
    assert err.splitlines() == [f"specbridge: error: {obj['error']['message']}"] and "--draft-tokens must be ≥ 2" in err


def test_cli_page_numbers_table_is_generated_from_the_rows():
    """docs/cli.md's table of numeric options is optspec.NUMBERS and the commands' options as they are
    (python scripts/gen_cli_doc.py rewrites it), and its counts are the ones this file asserts."""
    text = gen_cli_doc.PAGE.read_text()
    assert gen_cli_doc.render(text) == text, "docs/cli.md is stale: run python scripts/gen_cli_doc.py"
    assert f"{NUMERIC_OPTIONS} options, {NUMERIC_CASES} cases, {LEGAL_ZEROS} legal zeros" in " ".join(text.split())


def test_ctrl_c_anywhere_in_every_core_command(tmp_path):
    """A real SIGINT at calls spread over each core command's run (the first, the last before its first output,
    two seeded between): exit 130, the one `specbridge: error: interrupted` line, the error object under --json;
    an interrupted convert leaves no output or a whole one, and nothing hidden beside it."""
    from conftest import STORY, TINY_TARGET

    from specbridge.fuzzing import CTRL_C_CASES_PER_RUN, CTRL_C_RUNS, ctrl_c_cases, interrupted_problems

    cases = ctrl_c_cases(STORY, TINY_TARGET, tmp_path)
    assert len(cases) == len(CTRL_C_RUNS) * CTRL_C_CASES_PER_RUN == 28
    assert {c["argv"].split()[0] for c in cases} == {"inspect", "check", "convert", "restore", "launch", "engines"}
    for c in cases:
        assert c["fired"] and c["of"] > 100, c  # the signal was sent, inside a run of some length
        assert not interrupted_problems(c["code"], c["stdout"], c["stderr"], as_json=True), (
            c,
            interrupted_problems(c["code"], c["stdout"], c["stderr"], True),
        )
        if c["argv"].startswith("convert"):
            assert c["left"] in ([], ["out"]) and c["out_opens"] in (None, True), c
