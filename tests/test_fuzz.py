"""Bounded fuzz run (CI): every mutated fixture ends in a result or a clean refusal, and every human
report of the CLI renders it (exit 0/1/2, never 3), within time and memory bounds. Length: SPECBRIDGE_FUZZ_SECONDS (default 15,
about 180 inputs on a loaded 2-core machine; CI sets 60). Long runs: scripts/fuzz.py."""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

import fuzz  # noqa: E402


def test_fuzz_reader_config_and_checkers():
    seconds = float(os.environ.get("SPECBRIDGE_FUZZ_SECONDS", "15"))
    s = fuzz.run(seconds, seed=int(os.environ.get("SPECBRIDGE_FUZZ_SEED", "1")), per_input=5.0)
    print({k: v for k, v in s.items() if k != "crash_details"})
    assert s["crashes"] == 0 and s["hangs"] == 0, s["crash_details"]
    assert s["inputs"] > 100 and s["ok"] > 0 and s["refused"] > 0  # the mutations reach both outcomes
    assert s["cli_runs"] == 5 * s["inputs"]  # inspect, check (all eras, two single eras), convert on every input
    assert s["cli_exit"][0] and s["cli_exit"][1] and s["cli_exit"][2]  # reports rendered, findings and refusals all reached
    assert s["slowest_s"] < 60.0  # wall clock on a shared machine; the 5 s CPU limit per input is enforced inside
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
    for argv, kind, bad, code, err, seconds in runs:
        command, option_kind = argv.split()[0], kind.split(":")[0]
        want = 1 if (command, option_kind) in LAUNCH_REFUSED else 2
        lines = err.strip().splitlines()
        assert code == want and len(lines) == 1 and lines[0].startswith("specbridge: error: "), (argv, kind, code, err)
        assert bad in lines[0], (argv, kind, lines[0])  # the line names the path
        assert seconds < 5.0, (argv, kind, seconds)
    assert not (tmp_path / "out").exists()  # nothing was written


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
