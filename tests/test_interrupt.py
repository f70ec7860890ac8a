"""Ctrl-C, for real: a SIGINT sent to a real `specbridge` process while it is inside its work, in commands on both
of the entry point's paths (check on the fast path; bench, sweep, eval and train through typer). Each answers
exit 130 with the one line `specbridge: error: interrupted…` on stderr and, under --json, the error object.

No test waits on a clock: the signal goes when the process is provably inside the command (its request reached a
socket this test holds open without answering, a prompts FIFO it reads is held open without data, the engine it
started wrote its pid, the first generated batch is on disk), so a fast or a slow machine sends it at the same
point. tests/test_fuzz.py sends the signal in-process at calls spread over every core command's run."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import SF_SGLANG, STORY, TINY_TARGET

from specbridge.fuzzing import interrupted_problems

PATIENCE_S = 300  # how long a stuck process may take to reach its point before the test gives up (never the assertion)


def start(argv, env=None) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "specbridge", *map(str, argv)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )


def interrupt(proc: subprocess.Popen) -> tuple[int, str, str]:
    """SIGINT, then what the process said and its exit code."""
    try:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=PATIENCE_S)
    finally:
        proc.kill()
    return proc.returncode, out, err


def wait_for(ready, proc: subprocess.Popen, what: str):
    """Poll `ready()` until it holds; the process ending first fails the test with what it said."""
    deadline = time.monotonic() + PATIENCE_S
    while not (got := ready()):
        if proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"the process ended (exit {proc.returncode}) before {what}:\n{out[-2000:]}\n{err[-2000:]}")
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"no {what} after {PATIENCE_S} s")
        time.sleep(0.02)
    return got


def silent_server() -> socket.socket:
    """A TCP port that accepts connections and never answers: a request to it waits until interrupted."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    srv.setblocking(False)
    return srv


def accepted(srv: socket.socket):
    try:
        return srv.accept()[0]
    except BlockingIOError:
        return None


def assert_interrupted(code: int, out: str, err: str, as_json: bool = True) -> str:
    problems = interrupted_problems(code, out, err, as_json)
    assert not problems, (problems, out[-1500:], err[-1500:])
    return err.strip()


def assert_engine_stopped(engine: int, command: str) -> None:
    """The engine process `command` started is gone within a minute of the interrupt (a generous bound, not what the
    test measures); one still alive is killed and the test fails."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            os.kill(engine, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    os.kill(engine, signal.SIGKILL)
    pytest.fail(f"the engine outlived the interrupted {command}")


def test_check_interrupted_while_fetching_a_hub_target(tmp_path):
    """The fast path (no typer): check waits on the Hub for the target's config; Ctrl-C there."""
    srv = silent_server()
    hub = {"HF_ENDPOINT": f"http://127.0.0.1:{srv.getsockname()[1]}", "HF_HUB_CACHE": str(tmp_path / "hub"), "HF_HUB_OFFLINE": "0"}
    proc = start(["check", STORY, "--target", "someorg/some-target", "--engine", "vllm", "--json"], env=hub)
    conn = wait_for(lambda: accepted(srv), proc, "a request to the Hub")
    line = assert_interrupted(*interrupt(proc))
    assert line == "specbridge: error: interrupted"
    conn.close()


def test_bench_interrupted_while_waiting_for_the_server(tmp_path):
    """Through typer: bench's first request is held open; Ctrl-C while it waits. (typer's standalone handling
    used to turn this into a silent exit 130.)"""
    srv = silent_server()
    prompts = tmp_path / "p.txt"
    prompts.write_text("hello\n")
    proc = start(["bench", "--url", f"http://127.0.0.1:{srv.getsockname()[1]}", "--prompts", prompts, "--json"])
    conn = wait_for(lambda: accepted(srv), proc, "a request to the server")
    line = assert_interrupted(*interrupt(proc))
    assert line == "specbridge: error: interrupted"
    conn.close()


HANGING_ENGINE = textwrap.dedent("""
    import os, sys, time
    open({pidfile!r}, "w").write(str(os.getpid()))
    print("server_args=ServerArgs(model_path=...)", flush=True)
    time.sleep(600)
""")


def test_sweep_interrupted_while_its_engine_starts_stops_the_engine(tmp_path):
    """sweep has started an engine (a stand-in that never gets ready); Ctrl-C: the engine goes too."""
    pidfile = tmp_path / "engine.pid"
    script = tmp_path / "engine.py"
    script.write_text(HANGING_ENGINE.format(pidfile=str(pidfile)))
    launcher = tmp_path / "py"
    launcher.write_text(f"#!/bin/sh\nexec {sys.executable} {script}\n")
    launcher.chmod(0o755)
    argv = ["sweep", SF_SGLANG, "-e", "sglang", "-t", TINY_TARGET, "--python", launcher, "--log-dir", tmp_path / "logs", "--json"]
    proc = start(argv)
    wait_for(lambda: pidfile.exists() and pidfile.read_text(), proc, "the engine's start")
    engine = int(pidfile.read_text())
    assert_interrupted(*interrupt(proc))
    assert_engine_stopped(engine, "sweep")


def tiny_target_and_drafter(tmp_path: Path) -> tuple[Path, Path]:
    """The counting target of tests/test_train.py and a drafter trained on it for two steps (it need not be good)."""
    from test_train import make_counting_target, tiny_args

    from specbridge.train.trainer import train

    target = tmp_path / "target"
    make_counting_target(target)
    drafter = tmp_path / "drafter"
    train(tiny_args(target, drafter, steps=2, num_prompts=8, num_val_prompts=4, max_new_tokens=8), log=lambda *a: None)
    return target, drafter


def bytes_waiting(fd: int) -> int:
    import fcntl
    import termios

    return int.from_bytes(fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"), "little")


@pytest.mark.ml
def test_eval_interrupted_while_reading_its_prompts(tmp_path):
    """eval reads its prompts from a FIFO this test holds open: half a line is written, and once eval has read
    it (the FIFO is empty again) it is waiting inside the command for the rest; Ctrl-C there."""
    pytest.importorskip("torch")
    target, drafter = tiny_target_and_drafter(tmp_path)
    fifo = tmp_path / "prompts.jsonl"
    os.mkfifo(fifo)
    proc = start(["eval", drafter, "--target", target, "--prompts", fifo, "--max-new-tokens", "8", "--json"])

    def writer():  # a reader has the FIFO open (opening for writing without one fails with ENXIO)
        try:
            return os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            return None

    fd = wait_for(writer, proc, "eval opening its prompts")
    try:
        os.write(fd, b'{"prompt_ids": [5, 6')
        wait_for(lambda: bytes_waiting(fd) == 0, proc, "eval reading its prompts")
        line = assert_interrupted(*interrupt(proc))
    finally:
        os.close(fd)
    assert line == "specbridge: error: interrupted"


def train_argv(target: Path, out: Path, data_dir: Path) -> list:
    return [
        "train",
        "--target",
        target,
        "--out",
        out,
        "--train-prompts",
        target / "train.jsonl",
        "--val-prompts",
        target / "val.jsonl",
        "--max-new-tokens",
        "24",
        "--gen-batch-size",
        "4",
        "--gen-workers",
        "1",
        "--aux-layers",
        "1,2,3",
        "--draft-vocab-size",
        "448",
        "--data-dir",
        data_dir,
        "--prepare-only",
    ]


def capture_of(data_dir: Path, split: str = "train") -> dict:
    """A finished capture directory's content: responses, the manifest's shards, every shard's tensors."""
    from safetensors.torch import load_file

    (cdir,) = [d for d in data_dir.glob(f"gencap-{split}-*") if "." not in d.name]  # no .part0 or .partial left
    manifest = json.loads((cdir / "manifest.json").read_text())
    tensors = {s["file"]: load_file(str(cdir / s["file"])) for s in manifest["shards"]}
    return {"responses": (cdir / "responses.jsonl").read_text(), "shards": manifest["shards"], "tensors": tensors}


@pytest.mark.ml
def test_interrupted_train_keeps_its_generated_data_and_resumes_from_it(tmp_path):
    """Ctrl-C once the first generated batch is on disk: exit 130, the one error line saying how many prompts'
    data is kept; the same command again reuses them (said on stderr) and ends with the data an uninterrupted
    run generates, byte for byte."""
    torch = pytest.importorskip("torch")
    from test_train import make_counting_target

    target = tmp_path / "target"
    make_counting_target(target)
    data = tmp_path / "data"
    proc = start(train_argv(target, tmp_path / "out", data))
    wait_for(lambda: list(data.glob("gencap-train-*.part0/batch-*.json")), proc, "the first generated batch on disk")
    code, out, err = interrupt(proc)
    lines = err.strip().splitlines()
    assert code == 130 and err.count("specbridge: error:") == 1 and "Traceback" not in err, err[-3000:]
    kept = int(lines[-1].split("the data of ")[1].split(" of 96 prompts is kept")[0])
    assert lines[-1].startswith("specbridge: error: interrupted; the data of ") and 0 < kept < 96, lines[-1]

    resumed = subprocess.run(
        [sys.executable, "-m", "specbridge", *map(str, train_argv(target, tmp_path / "out", data))], capture_output=True, text=True
    )
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    said = [line for line in resumed.stderr.splitlines() if line.startswith("specbridge: resuming gencap-train-")]
    assert len(said) == 1 and f"the data of {kept} of 96 prompts, kept by an interrupted run, is reused" in said[0], resumed.stderr[-3000:]
    assert not list(data.glob("*.part*"))  # merged: no part directory left

    fresh = tmp_path / "fresh"
    whole = subprocess.run(
        [sys.executable, "-m", "specbridge", *map(str, train_argv(target, tmp_path / "out2", fresh))], capture_output=True, text=True
    )
    assert whole.returncode == 0 and "resuming" not in whole.stderr, whole.stderr[-3000:]
    got, want = capture_of(data), capture_of(fresh)
    assert got["responses"] == want["responses"] and got["shards"] == want["shards"]
    for name, tensors in want["tensors"].items():
        assert tensors.keys() == got["tensors"][name].keys()
        for key, value in tensors.items():
            assert torch.equal(value, got["tensors"][name][key]), (name, key)


def _rows(torch, seed: int, n: int = 2) -> list[dict]:
    """n captured sequences of the capture format, small and distinct."""
    g = torch.Generator().manual_seed(seed)
    rows = []
    for k in range(n):
        length = 3 + k
        rows.append(
            {
                "input_ids": torch.randint(0, 500, (length,), generator=g, dtype=torch.int32),
                "loss_mask": torch.rand(length, generator=g) > 0.5,
                "aux_hidden": torch.randn(length, 6, generator=g).to(torch.bfloat16),
                "final_hidden": torch.randn(length, 2, generator=g).to(torch.bfloat16),
                "target_next": torch.randint(0, 500, (length,), generator=g, dtype=torch.int32),
            }
        )
    return rows


@pytest.mark.ml
def test_a_resumed_part_reads_only_whole_records(tmp_path):
    """A part directory as an interrupt leaves it (two batches in shard 0, batches 2 and 3 kept), then damaged the
    ways a kill mid-write can: each resume keeps exactly the whole prefix and removes the rest."""
    import shutil

    torch = pytest.importorskip("torch")
    from specbridge.train import parts

    plan = parts.plan_of([[[5, 6]], [[7]], [[8, 9]], [[10]]], aux=[1], max_new_tokens=4)
    made = tmp_path / "made"
    state = parts.open_part(made, plan)
    batches = [_rows(torch, b) for b in range(4)]
    for b, rows in enumerate(batches):
        parts.keep_batch(state, rows, [json.dumps({"b": b, "k": k}) for k in range(len(rows))], 10 + b)
        if b == 1:
            parts.write_pending_shard(state)

    def resume(damage=None, other_plan=False):
        d = tmp_path / f"copy-{len(list(tmp_path.iterdir()))}"
        shutil.copytree(made, d)
        if damage:
            damage(d)
        return d, parts.open_part(d, parts.plan_of([[[1]]]) if other_plan else plan)

    d, whole = resume()
    assert (whole.next_batch, whole.kept_prompts, len(whole.shards), whole.pending_batches) == (4, 8, 1, [2, 3])
    assert whole.pending_response_tokens == 12 + 13 and whole.shard_response_tokens == 10 + 11
    for got, want in zip(whole.pending, batches[2] + batches[3]):
        assert all(torch.equal(got[k], want[k]) for k in want)

    def truncate(path):
        return lambda d: (d / path).write_bytes((d / path).read_bytes()[:-7])

    cases = {
        "a batch file cut short": (truncate("batch-00003.safetensors"), 3),
        "a record cut short": (truncate("batch-00003.json"), 3),
        "a batch without its record": (lambda d: (d / "batch-00002.json").unlink(), 2),  # 3 is not read past the gap
        "a shard file cut short": (truncate("shard-00000.safetensors"), 0),  # its batches went with its record
        "a .tmp beside": (lambda d: (d / "batch-00004.safetensors.tmp").write_bytes(b"half"), 4),
    }
    for name, (damage, next_batch) in cases.items():
        d, got = resume(damage)
        assert got.next_batch == next_batch, name
        names = sorted(p.name for p in d.iterdir())
        kept_batches = [b for b in (2, 3) if b < next_batch and next_batch > 2]
        want = ["plan.json"] + [f"batch-{b:05d}.{x}" for b in kept_batches for x in ("json", "safetensors")]
        want += ["shard-00000.json", "shard-00000.safetensors"] if next_batch >= 2 else []
        assert names == sorted(want), (name, names)
    d, other = resume(other_plan=True)
    assert other.next_batch == 0 and [p.name for p in d.iterdir()] == ["plan.json"]


def test_serve_interrupted_once_ready_stops_the_engine_and_says_so(tmp_path):
    """serve used to stop its engine and return 130 without a word; now the entry point says the line too."""
    from test_serve import FAKE

    pidfile = tmp_path / "engine.pid"
    script = tmp_path / "engine.py"
    script.write_text(f"import os\nopen({str(pidfile)!r}, 'w').write(str(os.getpid()))\n" + FAKE.format(mode="ok"))
    launcher = tmp_path / "py"
    launcher.write_text(f"#!/bin/sh\nexec {sys.executable} {script}\n")
    launcher.chmod(0o755)
    proc = start(
        ["serve", SF_SGLANG, "-e", "sglang", "--target", TINY_TARGET, "--python", launcher, "--port", "18933", "--log", tmp_path / "s.log"]
    )
    for line in proc.stdout:  # serve's own line once the engine is up (the stand-in prints the real log lines)
        if line.startswith("ready:"):
            break
    else:
        pytest.fail(f"serve ended before ready (exit {proc.wait()}): {proc.stderr.read()[-2000:]}")
    engine = int(pidfile.read_text())
    code, _, err = interrupt(proc)
    assert code == 130 and err == "specbridge: error: interrupted\n", err
    assert_engine_stopped(engine, "serve")


@pytest.mark.ml
def test_a_merge_interrupted_before_the_capture_is_placed_is_done_again(tmp_path, monkeypatch):
    """Ctrl-C after every part finished, while merging them: the interrupt says all prompts' data is kept, and
    the next run merges the parts again (they stay whole until the capture is in place) to the same capture."""
    pytest.importorskip("torch")
    from test_train import make_counting_target
    from transformers import AutoModelForCausalLM

    from specbridge.prompts import read_prompts
    from specbridge.train import selfdistill

    target = tmp_path / "target"
    make_counting_target(target)
    prompts = read_prompts(target / "train.jsonl")[:6]
    model = AutoModelForCausalLM.from_pretrained(target).eval()
    capture = tmp_path / "cap"
    args = (str(target), model, None, prompts, prompts, capture, [1, 2, 3], 8, 4, 1, {"target": "tiny"})
    real_replace = os.replace

    def interrupted_placing(src, dst):
        if Path(dst) == capture:
            raise KeyboardInterrupt
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", interrupted_placing)
    with pytest.raises(KeyboardInterrupt) as interrupt:
        selfdistill.build_capture(*args, log=lambda *a: None)
    monkeypatch.undo()
    assert "the data of 6 of 6 prompts is kept" in interrupt.value.specbridge_kept
    manifest = selfdistill.build_capture(*args, log=lambda *a: None)
    assert manifest["num_seqs"] == 6 and len(selfdistill.load_rows(capture)) == 6
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cap", "target"]  # no part or .partial left
