"""The vocabulary of an engine's serving row: how `serve`, `sweep` and `bench` run and read a live server.

Each engine file with a launch line holds one `SERVE = Serving(…)` row beside its `LAUNCH` row; the code in
`bench/` and `cli/` reads the row and never the engine's name. A leaf module (it imports nothing of the
package), so the engine files can import it."""

from __future__ import annotations

from ..record import field, record


@record
class Phase:
    """One start-up phase of an engine, read off its own log."""

    name: str
    pattern: str  # regex over one log line that marks the phase as reached ("" = reached at the start)
    hint: str  # what to try when the start stalls right after this phase


@record
class Serving:
    """How a started engine is watched, readied and benchmarked.

    `interpreter` rewrites the launch line's leading words to run the engine under a given Python
    ({python}), e.g. a cached venv: `vllm serve T` -> `{python} -m vllm.entrypoints.openai.api_server --model T`."""

    engine: str
    phases: tuple[Phase, ...]  # ordered; the last one is "ready"
    ready_path: str  # the HTTP path that answers 200 once the server serves
    ready_line: str  # the log line `serve` shows when the HTTP endpoint answers (the engine's own words)
    interpreter: tuple[tuple[str, ...], tuple[str, ...]]  # (launch-line prefix, its replacement with {python})
    speculative_from: str  # the launch-line word that starts its speculative part (cut for the baseline)
    cite: str
    trees: bool = False  # takes a draft tree (topk > 1, a draft-token budget): sweep tries those settings
    sweep_flags: tuple[str, ...] = ()  # flags sweep adds to the launch line (a small, reproducible server)
    sweep_env: dict[str, str] = field(default_factory=dict)  # environment sweep adds for the engine
    counters_path: str = ""  # Prometheus spec-decode counters, read as deltas per concurrency level
    server_info_path: str = ""  # cumulative accept length since the server started
    request_extra: dict = field(default_factory=dict)  # per-request body fields that return speculative details
