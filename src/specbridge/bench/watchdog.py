"""Follow an engine's startup log through its phases and say where a start stalls.

The story's server hung at CUDA-graph capture with no error until a watchdog killed it. The phase
patterns are the engines' own log lines, in each engine's SERVE row (`phases`); each phase has its own
timeout, and a stall is reported with the phase, the last log lines and what to try.
"""

from __future__ import annotations

import re
import time

from ..engines.registry import SERVERS
from ..record import field, record


@record(frozen=False)
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
        phases = SERVERS[self.engine].phases
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
        phases = SERVERS[self.engine].phases
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
            # what it wrote before exiting and this poll has not read yet: its last phase and its last words
            for more in lines_iter:
                if more is None:
                    break
                prog.feed(more, clock() - t0)
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

    ready_line = SERVERS[engine].ready_line

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
