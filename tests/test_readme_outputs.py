"""The README's examples that show a command's output are what the tool prints: each shown block is run (against
examples/ or an input built here the way the README describes it) and its lines compared with the tool's.

A shown line matches a printed line whole, `…` standing for any text and `(…)` for the rest of the line (the README
elides long messages); the
shown lines appear in the printed output in order, and a line of its own `…` says lines were left out. A block
whose input cannot be built here is named in NOT_RUN with why, so a new example is either run or said not to be."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
# a fenced block that starts with one `$ specbridge …` command line, then the output shown for it
BLOCK = re.compile(r"^```\n\$ (specbridge [^\n]*)\n(.*?)^```$", re.M | re.S)
FP8 = {"quant_method": "fp8", "weight_block_size": [128, 128], "fmt": "e4m3"}  # tests/test_mtp_check.py's


def _dflash_drafter(d: Path) -> None:
    """'A two-layer DFlash drafter laid out as vLLM's qwen3_dflash.py loads it' (tests/dflash_fixtures.py)."""
    import dflash_fixtures as df

    df.write(d / "dflash-drafter")


def _glm_fp8(d: Path) -> None:
    """'A GLM target re-quantized without its MTP layer' (tests/mtp_fixtures.py, FP8 with no head)."""
    import mtp_fixtures as mx

    mx.write_target(d / "glm-fp8", mx.glm_config(quantization_config=FP8), mtp=False)


# the inputs the README names that are built here, by the first path argument of the command
BUILT = {"dflash-drafter": _dflash_drafter, "glm-fp8": _glm_fp8}
# shipped with the repository: run from its root
SHIPPED = ("examples/",)
NOT_RUN = {
    "kimi-eagle3/": "the story's 4.3 GB drafter and Kimi-K2.5 target are not shipped, and the launch line is elided (…)",
}


def shown_examples() -> list[tuple[str, list[str]]]:
    return [(cmd, out.rstrip("\n").split("\n")) for cmd, out in BLOCK.findall(README.read_text())]


def matches(shown: str, printed: str) -> bool:
    """`…` is any text; `(…)` the rest of a message from its parenthesis on (the README cuts citations short)."""
    return re.fullmatch(".*".join(map(re.escape, shown.replace("(…)", "(…").split("…"))), printed) is not None


def missing_lines(shown: list[str], printed: list[str]) -> list[str]:
    """The shown lines not found, in order, among the printed ones (`…` alone: lines left out)."""
    at, missing = 0, []
    for line in shown:
        if line.strip() == "…":
            continue
        hit = next((k for k in range(at, len(printed)) if matches(line, printed[k])), None)
        if hit is None:
            missing.append(line)
        else:
            at = hit + 1
    return missing


def run_cli_here(argv: list[str], cwd: Path, monkeypatch, capsys) -> list[str]:
    """The command's stdout as a pipe gets it, run in this process (the entry point the console script calls)."""
    from specbridge.cli import entry

    monkeypatch.chdir(cwd)
    monkeypatch.setattr(sys, "argv", ["specbridge", *argv])
    with pytest.raises(SystemExit):
        entry.main()
    return capsys.readouterr().out.rstrip("\n").split("\n")


EXAMPLES = shown_examples()


def test_the_readme_shows_outputs_and_each_is_run_or_said_not_to_be():
    assert len(EXAMPLES) >= 4
    for cmd, _ in EXAMPLES:
        where = shlex.split(cmd)[2]
        assert where in BUILT or where.startswith(SHIPPED) or where in NOT_RUN, f"README example not run here: {cmd}"


@pytest.mark.parametrize("cmd,shown", EXAMPLES, ids=[c for c, _ in EXAMPLES])
def test_readme_output_is_what_the_tool_prints(cmd, shown, tmp_path, monkeypatch, capsys):
    argv = shlex.split(cmd)[1:]
    where = argv[1]
    if where in NOT_RUN:
        pytest.skip(NOT_RUN[where])
    cwd = ROOT
    if where in BUILT:
        BUILT[where](tmp_path)
        cwd = tmp_path
    out_dir = next((argv[k + 1] for k, a in enumerate(argv) if a in ("-o", "--out")), None)
    if out_dir is not None:  # written under the test's directory, and named there as the README names it
        local = tmp_path / "out"
        argv = [str(local) if a == out_dir else a for a in argv]
        printed = [line.replace(str(local), out_dir) for line in run_cli_here(argv, cwd, monkeypatch, capsys)]
    else:
        printed = run_cli_here(argv, cwd, monkeypatch, capsys)
    assert not missing_lines(shown, printed), "\n".join(
        ["shown in the README, not printed:", *missing_lines(shown, printed), "printed:", *printed]
    )


def test_the_comparison_catches_a_stale_line():
    printed = ["dflash-drafter  layout dflash → vllm 0.32.0 (era dflash 0.31.0+; class X): OK", "25 tensors: …"]
    assert missing_lines(["dflash-drafter  layout dflash → vllm 0.32.0 (era dflash 0.29.0+; class X): OK"], printed)
    assert not missing_lines(["dflash-drafter  layout dflash → vllm 0.32.0 (era dflash …; class X): OK", "…"], printed)
    assert missing_lines(["25 tensors: …", "dflash-drafter …"], printed)  # out of order
    assert matches("a note: replaced (…)", "a note: replaced (a cite). Fine if trained so.")
    assert not matches("a note: replaced (…)", "a note: replaced. Fine")
