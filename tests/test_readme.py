"""The README's commands run as written, in the shell its first lines set up (`. .venv/bin/activate`: `specbridge`
on PATH), and the output each example shows is the tool's own: every line shown, its `…` elisions aside, is in
what the command prints. examples/ci-gate.sh runs the same way, with no `specbridge` on PATH at all."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text()
VENV_BIN = Path(sys.executable).parent  # the interpreter running the tests is the venv's (./setup.sh; CI too)


def readme_examples() -> list[tuple[str, list[str]]]:
    """(command, the output lines shown under it) for every `$ ` line in the README's fenced blocks."""
    out = []
    for block in re.findall(r"^```[a-z]*\n(.*?)^```", README, re.S | re.M):
        lines = block.splitlines()
        for i, line in enumerate(lines):
            if line.startswith("$ "):
                shown = []
                for rest in lines[i + 1 :]:
                    if rest.startswith("$ "):
                        break
                    shown.append(rest)
                out.append((line[2:], shown))
    return out


EXAMPLES = readme_examples()


def activated_env() -> dict:
    """The environment after `. .venv/bin/activate`: the venv's bin first on PATH."""
    return {**os.environ, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}", "VIRTUAL_ENV": str(VENV_BIN.parent)}


def test_the_readme_has_examples_and_its_first_lines_set_up_the_shell_they_need():
    assert len(EXAMPLES) >= 5, EXAMPLES
    first = re.search(r"^```bash\n(.*?)^```", README, re.S | re.M).group(1).splitlines()
    assert first[0].startswith("./setup.sh && . .venv/bin/activate"), first
    assert first[1].startswith("python -m pytest"), first
    assert all(cmd.split()[0] == "specbridge" for cmd, _ in EXAMPLES)


@pytest.mark.parametrize("command,shown", EXAMPLES, ids=[c.split(" --")[0][:60] for c, _ in EXAMPLES])
def test_each_example_runs_as_written_and_prints_what_the_readme_shows(command, shown, tmp_path):
    (tmp_path / "examples").symlink_to(REPO / "examples")  # outputs (convert -o) land beside, in the test's folder
    r = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=activated_env(), capture_output=True, text=True, timeout=120)
    printed = r.stdout + r.stderr
    assert r.returncode in (0, 1), (command, r.returncode, r.stderr[-2000:])
    assert "specbridge: error" not in r.stderr, r.stderr
    verdicts = [line for line in shown if re.search(r": (NOT )?OK$", line)]
    if verdicts:
        assert r.returncode == (1 if any(v.endswith("NOT OK") for v in verdicts) else 0), (command, r.returncode)
    for line in shown:
        for piece in (p.strip() for p in line.split("…")):
            assert piece in printed, f"README shows {piece!r} under `{command}`; the tool printed:\n{printed[-3000:]}"


def test_activating_the_venv_puts_specbridge_on_path():
    activate = REPO / ".venv" / "bin" / "activate"
    if not activate.exists():
        pytest.skip("no .venv here (./setup.sh makes it)")
    r = subprocess.run(
        ["bash", "-c", f". {shlex.quote(str(activate))} && command -v specbridge && specbridge --version"],
        capture_output=True,
        text=True,
        timeout=60,
        env={k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"},
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == str(REPO / ".venv" / "bin" / "specbridge") and "specbridge " in r.stdout


def test_the_ci_gate_example_runs_with_no_specbridge_on_path(tmp_path):
    """examples/ci-gate.sh in a shell that never activated the venv: it finds the repository's own .venv. On the story's
    engine (SGLang 0.5.11 drops the bundled drafter's decoder) the gate stops at check, before eval needs torch."""
    if not (REPO / ".venv" / "bin" / "specbridge").exists():
        pytest.skip("no .venv here (./setup.sh makes it)")
    path = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep) if not (Path(p) / "specbridge").exists())
    env = {k: v for k, v in os.environ.items() if k not in ("SPECBRIDGE", "VIRTUAL_ENV")}
    env.update(PATH=path, ENGINE="sglang==0.5.11", OUT=str(tmp_path))
    r = subprocess.run(["bash", "examples/ci-gate.sh"], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "gate passed" not in r.stdout, (r.returncode, r.stderr[-2000:])
    report = json.loads((tmp_path / "check.json").read_text())
    assert report["ok"] is False and any(f["code"] == "L002" for f in report["findings"])
