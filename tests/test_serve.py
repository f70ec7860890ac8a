"""serve: the start-up watchdog names the phase a start stalls in and what to try; it never hangs.

The engines here are small stand-in processes that print the engines' own start-up log lines (fault
injection: a real engine cannot be made to hang on demand); the real vLLM start is covered by
tests/test_bench.py."""

from __future__ import annotations

import json
import sys
import textwrap
import time

import pytest
from conftest import SF_SGLANG, TINY_TARGET, run_cli

FAKE = textwrap.dedent("""
    import sys, time
    mode = {mode!r}
    print("server_args=ServerArgs(model_path=...)", flush=True)
    time.sleep(0.05)
    print("Load weight end. type=LlamaForCausalLM, mem usage=0.5 GB", flush=True)
    time.sleep(0.05)  # "die" exits within serve's 0.2 s poll of its last line: serve reads what is left once it is gone
    if mode == "die":
        print("RuntimeError: CUDA error: out of memory", flush=True)
        sys.exit(1)
    print("Capture cuda graph begin. This can take up to several minutes.", flush=True)
    if mode == "hang":
        time.sleep(600)
    print("Capture cuda graph end. Time elapsed: 1.2 s", flush=True)
    print("Capture draft cuda graph end. Time elapsed: 0.8 s", flush=True)
    print("The server is fired up and ready to roll!", flush=True)
    time.sleep(600)
""")


def _fake(tmp_path, mode):
    script = tmp_path / f"fake_{mode}.py"
    script.write_text(FAKE.format(mode=mode))
    launcher = tmp_path / f"py_{mode}"
    launcher.write_text(f"#!/bin/sh\nexec {sys.executable} {script}\n")
    launcher.chmod(0o755)
    return launcher


def _serve(tmp_path, mode, *extra):
    return run_cli(
        "serve",
        SF_SGLANG,
        "-e",
        "sglang",
        "--target",
        TINY_TARGET,
        "--python",
        _fake(tmp_path, mode),
        "--port",
        "18931",
        "--log",
        tmp_path / f"{mode}.log",
        *extra,
        timeout=120,
    )


def test_ready(tmp_path):
    r = _serve(tmp_path, "ok", "--exit-when-ready", "--phase-timeout", "20")
    assert r.returncode == 0, r.stderr
    for phase in ("engine init", "weights loaded", "target graphs", "draft graphs", "ready"):
        assert phase in r.stdout
    assert "--speculative-algorithm EAGLE3" in r.stdout


def test_stall_in_graph_capture_is_named(tmp_path):
    r = _serve(tmp_path, "hang", "--phase-timeout", "3")
    assert r.returncode == 1  # named and stopped by --phase-timeout, within _serve's own timeout
    assert "stalled after phase 'target graphs'" in r.stderr and "--disable-cuda-graph" in r.stderr
    assert "Capture cuda graph begin" in r.stderr  # the log tail is shown


def test_death_is_reported(tmp_path):
    r = _serve(tmp_path, "die", "--phase-timeout", "20")
    assert r.returncode == 1 and "exited during phase 'weights loaded'" in r.stderr and "out of memory" in r.stderr


def test_refuses_a_launch_check_flags(tmp_path):
    r = run_cli(
        "serve",
        SF_SGLANG,
        "-e",
        "sglang",
        "--target",
        TINY_TARGET,
        "--python",
        _fake(tmp_path, "ok"),
        "--command",
        f"python -m sglang.launch_server --model-path {TINY_TARGET} --speculative-algorithm EAGLE "
        f"--speculative-draft-model-path {SF_SGLANG}",
        "--exit-when-ready",
    )
    assert r.returncode == 1 and "A004" in r.stderr


def test_sigterm_stops_the_engine_too(tmp_path):
    """The engine runs in its own process group: serve stopped by SIGTERM (kill, docker stop) stops it, as on Ctrl-C."""
    import os
    import signal
    import subprocess

    pidfile = tmp_path / "engine.pid"
    script = tmp_path / "engine.py"
    script.write_text(
        f"import os, time\nopen({str(pidfile)!r}, 'w').write(str(os.getpid()))\n"
        + FAKE.format(mode="ok").replace("import sys, time", "import sys")
    )
    launcher = tmp_path / "py"
    launcher.write_text(f"#!/bin/sh\nexec {sys.executable} {script}\n")
    launcher.chmod(0o755)
    cmd = [sys.executable, "-m", "specbridge", "serve", SF_SGLANG, "-e", "sglang", "--target", TINY_TARGET, "--python", launcher]
    proc = subprocess.Popen([*map(str, cmd), "--port", "18932", "--log", str(tmp_path / "s.log")], stdout=subprocess.PIPE, text=True)
    try:
        for line in proc.stdout:
            if line.startswith("ready:"):
                break
        engine = int(pidfile.read_text())
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 130
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                os.kill(engine, 0)
            except ProcessLookupError:
                break
            time.sleep(0.2)
        else:
            pytest.fail("the engine outlived serve")
    finally:
        proc.kill()


def test_dtype_is_handed_to_the_engine(tmp_path):
    """--dtype (eval's values) goes on the engine's command line; anything else is refused at the door."""
    r = _serve(tmp_path, "ok", "--exit-when-ready", "--phase-timeout", "20", "--dtype", "Float32")
    assert r.returncode == 0 and "--dtype float32" in r.stdout, r.stdout + r.stderr
    r = _serve(tmp_path, "ok", "--exit-when-ready", "--dtype", "float8")
    assert r.returncode == 2 and "--dtype must be one of float32, bfloat16, float16" in r.stderr


def test_engine_arguments_only_after_dashes(tmp_path):
    """Arguments after `--` go to the engine's line as they are; before it, a mistyped or unknown option (one
    of another command, --json) is refused with one line, exit 2, and nothing is started or written."""
    r = _serve(tmp_path, "ok", "--exit-when-ready", "--phase-timeout", "20", "--", "--mem-fraction-static", "0.5", "--json")
    assert r.returncode == 0 and "--port 18931 --mem-fraction-static 0.5 --json" in r.stdout, r.stdout + r.stderr
    for wrong in (["--stesp", "2"], ["--json"], ["stray"]):
        r = _serve(tmp_path, "never", *wrong)
        [line] = r.stderr.splitlines()
        assert r.returncode == 2 and line.startswith("specbridge: error: "), (wrong, r.stderr)
        assert r.stdout == "" or json.loads(r.stdout)["error"]["message"] in line  # under --json: the error object
    assert not (tmp_path / "never.log").exists()
    r = _serve(tmp_path, "never", "--command", f"python -m sglang.launch_server --model-path {TINY_TARGET}", "--", "--x")
    assert r.returncode == 2 and "arguments after -- with --command" in r.stderr


def test_no_log_is_left_where_no_server_started(tmp_path):
    """A program that cannot be run (an engine not installed): the server never started, so no log of it
    is left behind; a log the user already had stays as it was."""
    from specbridge.bench.server import ServerProcess

    broken = tmp_path / "engine"
    broken.write_text("#!/nonexistent/interpreter\n")
    broken.chmod(0o755)
    with pytest.raises(OSError):
        ServerProcess([str(broken)], log_path=tmp_path / "new.log").start()
    assert not (tmp_path / "new.log").exists()
    (tmp_path / "old.log").write_text("an earlier run\n")
    with pytest.raises(OSError):
        ServerProcess([str(broken)], log_path=tmp_path / "old.log").start()
    assert (tmp_path / "old.log").read_text() == "an earlier run\n"
    r = run_cli("serve", SF_SGLANG, "-e", "sglang", "--target", TINY_TARGET, "--python", broken, "--log", tmp_path / "s.log")
    assert r.returncode == 2 and "cannot start" in r.stderr and not (tmp_path / "s.log").exists(), r.stderr
