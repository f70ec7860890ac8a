"""Shared test helpers: the real producer fixtures, and a raw safetensors writer for mutated copies."""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures"  # in the repository: a clone alone runs the tests
PRODUCERS = FIXTURES / "producers"
STORY = FIXTURES / "story"
SPEC_TRAIN = PRODUCERS / "speculators-0.9.0" / "train-save"
SPEC_CONVERT = PRODUCERS / "speculators-0.9.0" / "convert-eagle3-from-specforge-sglang-export"
SF_SGLANG = PRODUCERS / "specforge-0.2.0" / "export-sglang"
SF_HF = PRODUCERS / "specforge-0.2.0" / "export-hf"
ALL_PRODUCERS = [SPEC_TRAIN, SPEC_CONVERT, SF_SGLANG, SF_HF]
TINY_TARGET = PRODUCERS / "tiny-target-llama-4l"

if not PRODUCERS.is_dir():
    pytest.exit(f"test fixtures not found at {PRODUCERS} (tests/fixtures/ is part of the repository)", returncode=2)

# The README's plain `python -m pytest` stays a few minutes on 2 cores; .ci/run sets SPECBRIDGE_LONG_TESTS=1 and runs
# the long loops too (tests marked `long`: a crash-kill loop over full writes), and a longer fuzz run.
LONG_TESTS = os.environ.get("SPECBRIDGE_LONG_TESTS") == "1"


# CI (SPECBRIDGE_CONFORMANCE=per-era) keeps inside its time budget by leaving the real-engine runs marked
# `full_conformance` to SPECBRIDGE_CONFORMANCE=all (the default elsewhere): their outcomes stay recorded as Run rows.
PER_ERA = os.environ.get("SPECBRIDGE_CONFORMANCE") == "per-era"


def pytest_collection_modifyitems(config, items):
    long_skip = pytest.mark.skip(reason="a long loop: run with SPECBRIDGE_LONG_TESTS=1 (.ci/run sets it)")
    full_skip = pytest.mark.skip(reason="a full-conformance run: SPECBRIDGE_CONFORMANCE=all runs it (CI sets per-era)")
    for item in items:
        if "long" in item.keywords and not LONG_TESTS:
            item.add_marker(long_skip)
        if "full_conformance" in item.keywords and PER_ERA:
            item.add_marker(full_skip)


def raw_tensors(path: Path) -> dict[str, tuple[str, list[int], bytes]]:
    """name -> (dtype, shape, bytes), read with our reader (works for bf16 without torch)."""
    from specbridge.checkpoint.reader import open_checkpoint

    ck = open_checkpoint(path)
    return {n: (t.dtype, list(t.shape), t.read_bytes()) for n, t in ck.tensors.items()}


def write_raw(path: Path, tensors: dict[str, tuple[str, list[int], bytes]], metadata: dict | None = None) -> None:
    """A minimal safetensors writer for tests (our own, so tests can also write broken files)."""
    header: dict = {"__metadata__": metadata or {"format": "pt"}}
    off = 0
    for name, (dtype, shape, data) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [off, off + len(data)]}
        off += len(data)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for _, (_, _, data) in tensors.items():
            f.write(data)


def mutate(src: Path, dst: Path, *, tensors=None, config=None) -> Path:
    """Copy a fixture dir to dst, optionally replacing tensors (callable on the dict) and config."""
    shutil.copytree(src, dst)
    if tensors is not None:
        t = tensors(raw_tensors(src))
        write_raw(dst / "model.safetensors", t)
    if config is not None:
        cfg = json.loads((src / "config.json").read_text())
        ret = config(cfg)
        cfg = ret if isinstance(ret, dict) else cfg
        (dst / "config.json").write_text(json.dumps(cfg, indent=2))
    return dst


def error_messages(res) -> dict[str, list[str]]:
    """A check result's error findings, code -> their messages in report order."""
    out: dict[str, list[str]] = {}
    for f in res.findings:
        if f.severity == "error":
            out.setdefault(f.code, []).append(f.message)
    return out


def run_cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "specbridge.cli.entry", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture
def cli_here(capsys):
    """`specbridge ARGS` run in this process (a subprocess per call costs more than a small conversion):
    returns an object with returncode, stdout and stderr, as run_cli's does."""

    from specbridge.cli import entry

    def run(*args) -> SimpleNamespace:
        old, sys.argv = sys.argv, ["specbridge", *map(str, args)]
        code = 0
        try:
            entry.main()
        except SystemExit as e:
            code = e.code
        finally:
            sys.argv = old
        out = capsys.readouterr()
        return SimpleNamespace(returncode=code, stdout=out.out, stderr=out.err)

    return run


def tree_state(d: Path) -> dict[str, tuple[int, bytes | None]]:
    """Every entry under `d`: relative path -> (permission bits, bytes; None for a directory)."""
    out = {}
    for p in sorted(Path(d).rglob("*")):
        out[str(p.relative_to(d))] = (p.stat().st_mode & 0o7777, None if p.is_dir() else p.read_bytes())
    return out


def write_checkpoint(dir: Path, config: dict, tensors: dict) -> Path:
    """A drafter directory from numpy arrays: config.json and one model.safetensors (the family fixtures' writer)."""
    from safetensors.numpy import save_file

    dir.mkdir(parents=True, exist_ok=True)
    (dir / "config.json").write_text(json.dumps(config, indent=2))
    save_file(tensors, str(dir / "model.safetensors"))
    return dir
