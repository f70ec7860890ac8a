"""Shared test helpers: the real producer fixtures, and a raw safetensors writer for mutated copies."""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

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

# Test tiers. The README's plain `python -m pytest` runs the core tier: no torch, no real engine, no long loop, a
# few minutes on 2 cores. The others are named marks, run by `--tier` (or SPECBRIDGE_TIERS) and by .ci/run:
#   ml                needs torch/transformers (./setup.sh --ml)
#   engine            runs a real engine's code (scripts/setup_sglang_conformance.sh, scripts/setup_vllm_cpu.sh)
#   long              a long loop (crash kills spread over full writes, the long fuzz)
#   full_conformance  a real-engine run CI leaves to SPECBRIDGE_CONFORMANCE=all (its outcomes are recorded as Run rows)
# A test outside the chosen tiers is skipped with the tier that runs it as its reason (counted at the end of the run).
TIERS = ("core", "ml", "engine", "long", "full_conformance")
TIER_HOW = {
    "ml": "needs torch (./setup.sh --ml)",
    "engine": "runs a real engine (scripts/setup_*.sh)",
    "long": "a long loop",
    "full_conformance": "a full-conformance engine run",
}
LONG_TESTS = os.environ.get("SPECBRIDGE_LONG_TESTS") == "1"  # the long tier, also as .ci/run has always named it
# CI (SPECBRIDGE_CONFORMANCE=per-era) keeps inside its time budget by leaving the real-engine runs marked
# `full_conformance` to SPECBRIDGE_CONFORMANCE=all.
PER_ERA = os.environ.get("SPECBRIDGE_CONFORMANCE") == "per-era"


def pytest_addoption(parser):
    parser.addoption(
        "--tier",
        default=os.environ.get("SPECBRIDGE_TIERS", "core"),
        help=f"comma list of test tiers to run: {', '.join(TIERS)} or all (default core; env SPECBRIDGE_TIERS)",
    )


def chosen_tiers(config) -> set[str]:
    names = {t.strip() for t in config.getoption("--tier").split(",") if t.strip()}
    if "all" in names:
        names = set(TIERS) - (set() if not PER_ERA else {"full_conformance"})
    unknown = names - set(TIERS)
    if unknown:
        raise pytest.UsageError(f"--tier: unknown tier(s) {', '.join(sorted(unknown))}; known: {', '.join(TIERS)}, all")
    if LONG_TESTS:
        names.add("long")
    return names | {"core"}


def tiers_of(item) -> set[str]:
    return {t for t in TIERS[1:] if t in item.keywords}


def pytest_collection_modifyitems(config, items):
    chosen = chosen_tiers(config)
    for item in items:
        missing = sorted(tiers_of(item) - chosen)
        if missing:
            how = "; ".join(TIER_HOW[t] for t in missing)
            item.add_marker(pytest.mark.skip(reason=f"tier {'+'.join(missing)} ({how}): run with --tier {','.join(missing)} or .ci/run"))


# A core test that imports torch is a tier mistake: it fails on a fresh clone (./setup.sh installs no torch) and is slow
# where torch is installed. Each one is named at the end of the run, and the run fails.
_TORCH_IN_CORE: list[str] = []


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    before = "torch" in sys.modules
    yield
    if not before and "torch" in sys.modules and not tiers_of(item) & {"ml", "engine"}:
        _TORCH_IN_CORE.append(item.nodeid)


def pytest_sessionstart(session):
    """Compile src/ once: this environment may set PYTHONDONTWRITEBYTECODE, and then every CLI subprocess a test starts
    compiles every module it imports again (cached bytecode as an installed wheel has it; only changed files recompile)."""
    import compileall

    compileall.compile_dir(str(Path(__file__).resolve().parents[1] / "src"), quiet=2)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """Every skip counted by its reason, so a green run says what it did not run and why."""
    reasons: dict[str, int] = {}
    for rep in terminalreporter.stats.get("skipped", []):
        reason = rep.longrepr[2] if isinstance(rep.longrepr, tuple) else str(rep.longrepr)
        reason = reason.removeprefix("Skipped: ")
        reasons[reason] = reasons.get(reason, 0) + 1
    if reasons:
        terminalreporter.write_sep("-", f"skipped: {sum(reasons.values())}, by reason")
        for reason, n in sorted(reasons.items(), key=lambda kv: -kv[1]):
            terminalreporter.write_line(f"{n:6d}  {reason}")
    if _TORCH_IN_CORE:
        terminalreporter.write_sep("!", "core-tier tests that imported torch (mark them `ml`)")
        for nodeid in _TORCH_IN_CORE:
            terminalreporter.write_line(nodeid)


def pytest_sessionfinish(session, exitstatus):
    if _TORCH_IN_CORE and exitstatus == 0:
        session.exitstatus = 1


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
    """`python -m specbridge.cli.entry ARGS` as a process of its own: its exit code, stdout and stderr. Forked from this
    (already started) interpreter where that is safe, which skips the interpreter start and the imports every real
    process pays (most of a core test's time); otherwise, and with SPECBRIDGE_TEST_FORK=0, a fresh interpreter."""
    argv = [sys.executable, "-m", "specbridge.cli.entry", *map(str, args)]
    if _fork_is_safe():
        return _run_forked(argv, timeout)
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)


def _fork_is_safe() -> bool:
    """A fork copies one thread: safe in a single-threaded interpreter that has not loaded torch (whose thread pools a
    child cannot use)."""
    import threading

    return (
        os.environ.get("SPECBRIDGE_TEST_FORK", "1") != "0"
        and hasattr(os, "fork")
        and threading.active_count() == 1
        and "torch" not in sys.modules
    )


def _run_forked(argv: list[str], timeout: float) -> subprocess.CompletedProcess:
    """The entry point run in a forked child with fresh standard streams (stdin /dev/null, stdout and stderr pipes), as
    the interpreter would run it: its SystemExit is the exit code, an escaped exception a traceback and exit 1."""
    import io
    import selectors
    import time
    import traceback

    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 1
        try:
            os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
            os.dup2(out_w, 1)
            os.dup2(err_w, 2)
            for fd in (out_r, out_w, err_r, err_w):
                os.close(fd)
            sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8")
            sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8", errors="strict")
            sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8", errors="backslashreplace")
            sys.argv = [argv[2], *argv[3:]]
            from specbridge.cli.entry import main

            try:
                main()
                code = 0
            except SystemExit as e:
                if e.code is None or isinstance(e.code, int):
                    code = e.code or 0
                else:
                    print(e.code, file=sys.stderr)
                    code = 1
            except BaseException:
                traceback.print_exc()
                code = 1
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)
    os.close(out_w)
    os.close(err_w)
    chunks: dict[int, list[bytes]] = {out_r: [], err_r: []}
    deadline = time.monotonic() + timeout
    with selectors.DefaultSelector() as sel:
        for fd in chunks:
            sel.register(fd, selectors.EVENT_READ)
        while sel.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                for fd in chunks:
                    os.close(fd)
                raise subprocess.TimeoutExpired(argv, timeout)
            for key, _ in sel.select(left):
                data = os.read(key.fd, 65536)
                if data:
                    chunks[key.fd].append(data)
                else:
                    sel.unregister(key.fd)
    for fd in chunks:
        os.close(fd)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    out, err = (b"".join(chunks[fd]).decode("utf-8") for fd in (out_r, err_r))
    return subprocess.CompletedProcess(argv, code, out, err)


@pytest.fixture
def convert_json():
    """`specbridge convert ARGS --json`: the completed run and its parsed JSON object."""

    def run(*args):
        r = run_cli("convert", *args, "--json")
        return r, json.loads(r.stdout)

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
