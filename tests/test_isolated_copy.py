"""The repository is self-contained: its tracked files, copied alone into an empty directory, run the
tests; nothing in it reads or cites a path outside the repository. (.ci/run runs the whole suite that
way; this is the quick version every local run gets.)"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from conftest import LONG_TESTS

REPO = Path(__file__).resolve().parents[1]
OUTSIDE = re.compile(r"\.\./shared|shared/(fixtures|research)|shared research|SPECBRIDGE_SHARED")
# the long run (.ci/run, itself in a lone copy) reads every fixture three ways; a plain run, the reader's tests
HEADER_ONLY_TESTS = ["tests/test_reader.py", *(["tests/test_check_speed.py", "tests/test_render_safe.py"] if LONG_TESTS else [])]


NOT_SOURCE = {".git", ".venv", "__pycache__", ".pytest_cache", ".hypothesis", "build", "dist", "out"}


def tracked_files() -> list[str]:
    """git's tracked files; in a copy without .git (CI's lone copy is one), every file but build output."""
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
        return [f for f in out.decode().split("\0") if f and (REPO / f).is_file()]
    except (OSError, subprocess.CalledProcessError):
        return sorted(
            str(f.relative_to(REPO))
            for f in REPO.rglob("*")
            if f.is_file() and not NOT_SOURCE & set(f.relative_to(REPO).parts) and not f.parent.name.endswith(".egg-info")
        )


def test_nothing_reads_or_cites_a_path_outside_the_repository():
    offenders = []
    for f in tracked_files():
        if f == "tests/test_isolated_copy.py" or f.endswith((".safetensors", ".bin", ".pt", ".png", ".whl")):
            continue
        text = (REPO / f).read_text(errors="replace")
        offenders += [f"{f}:{n}: {line.strip()[:100]}" for n, line in enumerate(text.splitlines(), 1) if OUTSIDE.search(line)]
    assert offenders == []


@pytest.mark.long  # runs test files again in a copy (CI itself runs in a lone copy)
def test_a_lone_copy_runs_the_tests(tmp_path):
    """Tracked files only, into a directory with nothing beside the copy; its own src/ and fixtures are used
    (PYTHONPATH puts the copy first, ahead of this checkout's editable install)."""
    lone = tmp_path / "alone" / "specbridge"
    lone.mkdir(parents=True)
    archive = tmp_path / "repo.tar"
    with tarfile.open(archive, "w") as tar:
        for f in tracked_files():
            tar.add(REPO / f, arcname=f)
    with tarfile.open(archive) as tar:
        tar.extractall(lone, filter="data")
    archive.unlink()
    assert sorted(os.listdir(lone.parent)) == ["specbridge"]
    env = {**os.environ, "PYTHONPATH": str(lone / "src"), "PYTHONDONTWRITEBYTECODE": "1"}
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *HEADER_ONLY_TESTS],
        cwd=lone,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    probe = subprocess.run(
        [sys.executable, "-c", "import specbridge; print(specbridge.__file__)"], cwd=lone, env=env, capture_output=True, text=True
    )
    assert probe.stdout.strip().startswith(str(lone / "src"))  # the copy's code ran, not this checkout's
