"""Follow an engine's startup log through its phases and say where a start stalls.

The story's server hung at CUDA-graph capture with no error until a watchdog killed it. The phase
patterns below are the engines' own log lines (vLLM 0.32, SGLang 0.5.x); each phase has its own
timeout, and a stall is reported with the phase, the last log lines and what to try.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Phase:
    name: str
    pattern: str  # regex over one log line that marks the phase as reached
    hint: str  # what to try when the start stalls right after this phase


PHASES: dict[str, tuple[Phase, ...]] = {
    "vllm": (
        Phase("process started", r"", "the engine never logged: check the Python environment and the command"),
        Phase(
            "engine init",
            r"Initializing a V1 LLM engine|Initializing an LLM engine|vLLM API server version",
            "model config / tokenizer loading: check paths and trust_remote_code",
        ),
        Phase(
            "weights loaded",
            r"Loading weights took|Model loading took|Loading drafter model",
            "KV-cache profiling: lower --gpu-memory-utilization / VLLM_CPU_KVCACHE_SPACE or --max-model-len",
        ),
        Phase(
            "kv cache ready",
            r"GPU KV cache size|KV cache size|init engine \(profile",
            "CUDA-graph capture: retry with --enforce-eager; a drafter with many steps captures many graphs",
        ),
        Phase(
            "graphs captured",
            r"Graph capturing finished|Capturing CUDA graph.*100%|enforce_eager|Compilation .* took",
            "API server start: check the port and host",
        ),
        Phase("ready", r"Application startup complete|Uvicorn running|Starting vLLM API server", ""),
    ),
    "sglang": (
        Phase("process started", r"", "the engine never logged: check the Python environment and the command"),
        Phase("engine init", r"server_args=|Init torch distributed", "model config loading: check paths"),
        Phase("weights loaded", r"Load weight end", "memory pool / KV-cache setup: lower --mem-fraction-static"),
        Phase(
            "target graphs",
            r"Capture cuda graph begin|Capture cuda graph end",
            "draft CUDA-graph capture (can take minutes, or hang with DeepEP/expert metrics): retry with --disable-cuda-graph or a smaller --cuda-graph-max-bs",
        ),
        Phase(
            "draft graphs",
            r"Capture draft cuda graph end|Capture draft extend cuda graph end|draft.*cuda graph.*end",
            "HTTP server start: check the port",
        ),
        Phase("ready", r"The server is fired up and ready to roll", ""),
    ),
}


@dataclass
class Progress:
    engine: str
    reached: list[tuple[str, float]] = field(default_factory=list)  # (phase, seconds since start)
    lines: list[str] = field(default_factory=list)

    @property
    def phase(self) -> str:
        return self.reached[-1][0] if self.reached else "not started"

    @property
    def ready(self) -> bool:
        return self.phase == "ready"

    def feed(self, line: str, t: float) -> str | None:
        """Advance on one log line; return the phase name when a new one is reached."""
        self.lines.append(line.rstrip("\n"))
        del self.lines[:-200]
        phases = PHASES[self.engine]
        done = {p for p, _ in self.reached}
        for i, ph in enumerate(phases):
            if ph.name in done or not ph.pattern:
                continue
            if re.search(ph.pattern, line):
                # phases are ordered: reaching one implies those before it
                for earlier in phases[: i + 1]:
                    if earlier.name not in done:
                        self.reached.append((earlier.name, t))
                        done.add(earlier.name)
                return ph.name
        return None

    def stall_report(self, waited: float) -> str:
        phases = PHASES[self.engine]
        names = [p.name for p in phases]
        cur = self.phase if self.reached else "process started"
        nxt = names[names.index(cur) + 1] if cur in names and names.index(cur) + 1 < len(names) else "ready"
        hint = next((p.hint for p in phases if p.name == cur), "")
        tail = "\n".join("    " + ln for ln in self.lines[-12:])
        return f"startup stalled after phase '{cur}' (waiting for '{nxt}' for {waited:.0f} s).\n  try: {hint}\n  last log lines:\n{tail}"


def watch(lines_iter, engine: str, phase_timeout: float, total_timeout: float, alive=lambda: True, on_phase=None, clock=time.monotonic):
    """Consume (line or None) items until ready, death, or a timeout. Returns (Progress, error or None)."""
    prog = Progress(engine)
    t0 = clock()
    last = t0
    prog.reached.append(("process started", 0.0))
    for line in lines_iter:
        now = clock()
        if line is not None:
            ph = prog.feed(line, now - t0)
            if ph:
                last = now
                if on_phase:
                    on_phase(ph, now - t0)
                if prog.ready:
                    return prog, None
        if not alive():
            return prog, f"the server exited during phase '{prog.phase}'.\n" + "\n".join("    " + ln for ln in prog.lines[-12:])
        if now - last > phase_timeout:
            return prog, prog.stall_report(now - last)
        if now - t0 > total_timeout:
            return prog, prog.stall_report(now - last) + f"\n  (total start-up limit {total_timeout:.0f} s reached)"
    return prog, "the log ended before the server was ready"


def log_lines(srv, ready_url: str | None, engine: str, poll: float = 0.2):
    """A server's new log lines as they come (None when there is nothing new), plus the engine's own
    ready line once its HTTP endpoint answers: the endpoint is the final word on readiness, whatever
    the log says."""
    import urllib.request

    ready_line = (
        "Application startup complete (HTTP ready)" if engine == "vllm" else "The server is fired up and ready to roll (HTTP ready)"
    )

    while True:
        got = False
        for line in srv.follow():
            got = True
            yield line
        if ready_url:
            try:
                with urllib.request.urlopen(ready_url, timeout=1) as r:
                    if r.status == 200:
                        yield ready_line
            except OSError:
                pass
        if not got:
            yield None
            time.sleep(poll)
