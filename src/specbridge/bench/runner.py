"""Run the benchmark: per server (spec, then baseline) and per concurrency level, stream completions,
collect latencies, and read acceptance from the engine's own counters as deltas over each level.

A failing server never hangs the run: every request has a total deadline, every metrics read too, and
once more than `max_errors` requests fail the run stops (in-flight requests are cancelled) with a report.
"""

from __future__ import annotations

import asyncio
import math
import time
from typing import Callable

import httpx

from ..engines.registry import SERVERS
from ..engines.serving import Serving
from ..prompts import DEFAULT_PROMPT_FORMAT, MAX_NEW_TOKENS, Prompt
from ..record import field, record
from .client import MAX_BODY_BYTES, RequestResult, ServerError, get_bounded, get_json, served_model, stream_completion
from .metrics import (
    Acceptance,
    MetricsError,
    SpecCounters,
    sglang_request_acceptance,
    sglang_server_info_mal,
    vllm_acceptance,
    vllm_counters,
)
from .prompts import server_token_ids

ENGINES = ("auto", *SERVERS, "none")  # bench --engine: probe, an engine with a SERVE row, or no acceptance


@record(frozen=False)
class BenchConfig:
    url: str
    baseline_url: str | None = None
    prompts: list[Prompt] = field(default_factory=list)  # as read (text, messages, ids); sent as the server's ids
    prompts_source: str = ""
    concurrency: list[int] = field(default_factory=lambda: [1, 4, 16])
    max_tokens: int = MAX_NEW_TOKENS  # the stopping rule: specbridge.prompts.completion_params
    prompt_format: str = DEFAULT_PROMPT_FORMAT
    num_prompts: int = 16  # requests per level (at least the concurrency)
    timeout: float = 60.0  # per request, total
    warmup: int = 1
    max_errors: int = 0
    engine: str = "auto"
    model: str | None = None
    baseline_model: str | None = None


def percentiles(xs: list[float], ps=(50, 90, 99)) -> dict[str, float | None]:
    if not xs:
        return {f"p{p}": None for p in ps}
    s = sorted(xs)
    out = {}
    for p in ps:
        k = (len(s) - 1) * p / 100
        lo, hi = math.floor(k), math.ceil(k)
        out[f"p{p}"] = s[lo] + (s[hi] - s[lo]) * (k - lo)
    return out


@record(frozen=False)
class LevelResult:
    concurrency: int
    requests: int = 0
    ok: int = 0
    wall_s: float = 0.0
    output_tokens: int = 0
    errors: list[str] = field(default_factory=list)
    ttft: dict = field(default_factory=dict)
    itl: dict = field(default_factory=dict)
    tpot: dict = field(default_factory=dict)
    acceptance: Acceptance | None = None

    @property
    def tok_s(self) -> float | None:
        return self.output_tokens / self.wall_s if self.wall_s > 0 and self.ok else None

    def to_json(self) -> dict:
        ms = lambda d: {k: (None if v is None else round(v * 1000, 3)) for k, v in d.items()}  # noqa: E731
        return {
            "concurrency": self.concurrency,
            "requests": self.requests,
            "ok": self.ok,
            "failed": self.requests - self.ok,
            "wall_s": round(self.wall_s, 4),
            "output_tokens": self.output_tokens,
            "output_tok_s": None if self.tok_s is None else round(self.tok_s, 3),
            "ttft_ms": ms(self.ttft),
            "itl_ms": ms(self.itl),
            "tpot_ms": ms(self.tpot),
            "acceptance": self.acceptance.to_json() if self.acceptance else None,
            "errors": self.errors[:5],
        }


@record(frozen=False)
class ServerRun:
    role: str  # "spec" or "baseline"
    url: str
    model: str = ""
    engine: str = "none"  # what acceptance is read from: vllm, sglang, none
    levels: list[LevelResult] = field(default_factory=list)
    acceptance: Acceptance | None = None  # over all levels
    note: str = ""
    prompt_ids: list[list[int]] = field(default_factory=list)  # the prompts as this server tokenized them

    @property
    def row(self) -> Serving | None:
        """The engine's SERVE row: where its acceptance is read (None: acceptance not read)."""
        return SERVERS.get(self.engine)

    def to_json(self) -> dict:
        return {
            "role": self.role,
            "url": self.url,
            "model": self.model,
            "engine": self.engine,
            "note": self.note,
            "acceptance": self.acceptance.to_json() if self.acceptance else None,
            "levels": [lv.to_json() for lv in self.levels],
        }


@record(frozen=False)
class BenchReport:
    config: BenchConfig
    servers: list[ServerRun] = field(default_factory=list)
    error: str | None = None
    wall_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None

    def server(self, role: str) -> ServerRun | None:
        return next((s for s in self.servers if s.role == role), None)

    def speedups(self) -> list[tuple[int, float | None]]:
        spec, base = self.server("spec"), self.server("baseline")
        if not spec or not base:
            return []
        bl = {lv.concurrency: lv for lv in base.levels}
        out = []
        for lv in spec.levels:
            b = bl.get(lv.concurrency)
            out.append((lv.concurrency, lv.tok_s / b.tok_s if b and b.tok_s and lv.tok_s else None))
        return out

    def crossover(self) -> dict:
        """The lowest measured concurrency from which speculation stops paying off (speedup < 1)."""
        sp = [(c, s) for c, s in self.speedups() if s is not None]
        if not sp:
            return {"concurrency": None, "estimate": None, "note": "needs --baseline-url and completed levels"}
        if sp[0][1] < 1:
            return {"concurrency": sp[0][0], "estimate": None, "note": "speculation is slower already at the lowest measured concurrency"}
        for (c0, s0), (c1, s1) in zip(sp, sp[1:]):
            if s1 < 1 <= s0:
                # log-linear interpolation between the two levels
                t = (s0 - 1) / (s0 - s1)
                est = math.exp(math.log(c0) + t * (math.log(c1) - math.log(c0)))
                return {"concurrency": c1, "estimate": round(est, 2), "note": f"speedup falls below 1 between concurrency {c0} and {c1}"}
        return {"concurrency": None, "estimate": None, "note": "speculation is faster at every measured concurrency"}

    def to_json(self) -> dict:
        c = self.config
        return {
            "ok": self.ok,
            "error": self.error,
            "wall_s": round(self.wall_s, 3),
            "config": {
                "url": c.url,
                "baseline_url": c.baseline_url,
                "concurrency": c.concurrency,
                "max_tokens": c.max_tokens,
                "requests_per_level": {str(k): max(c.num_prompts, k) for k in c.concurrency},
                "timeout_s": c.timeout,
                "prompts": c.prompts_source,
                "prompt_format": c.prompt_format,
                "num_distinct_prompts": len(c.prompts),
            },
            "servers": {s.role: s.to_json() for s in self.servers},
            "speedup": [{"concurrency": k, "speedup": None if v is None else round(v, 4)} for k, v in self.speedups()],
            "crossover": self.crossover(),
        }


class Aborted(Exception):
    pass


# ---- acceptance probes --------------------------------------------------------------------------------


async def _scrape(client: httpx.AsyncClient, base: str, path: str, timeout: float) -> SpecCounters:
    status, body = await get_bounded(client, f"{base}{path}", timeout, MAX_BODY_BYTES)
    if status != 200:
        raise ServerError(f"GET {base}{path}: HTTP {status}")
    try:
        return vllm_counters(body.decode("utf-8"))
    except UnicodeDecodeError:
        raise MetricsError(f"{path} is not UTF-8 text") from None


async def detect_engine(client: httpx.AsyncClient, base: str, timeout: float, engine: str) -> tuple[str, str]:
    """(engine, note): `engine` itself when named, else the first SERVE row whose endpoint answers like it.
    Garbage from an endpoint the engine is expected to have raises MetricsError."""
    if engine == "none":
        return "none", "acceptance not read (--engine none)"
    for name, row in SERVERS.items():
        if engine not in ("auto", name):
            continue
        probe = _probe_counters if row.counters_path else _probe_server_info
        note = await probe(client, base, timeout, row, named=engine == name)
        if note is not None:
            return name, note
    return "none", "acceptance unavailable: neither vLLM /metrics spec counters nor SGLang /server_info found"


async def _probe_counters(client: httpx.AsyncClient, base: str, timeout: float, row: Serving, named: bool) -> str | None:
    """The note when `row.counters_path` answers with spec-decode counters (or the engine was named), else None."""
    url = f"{base}{row.counters_path}"
    try:
        status, body = await get_bounded(client, url, timeout)
    except ServerError:
        if named:
            raise
        return None
    if status != 200:
        if named:
            raise ServerError(f"GET {url}: HTTP {status}")
        return None
    try:
        c = vllm_counters(body.decode("utf-8", "strict"))
    except (MetricsError, UnicodeDecodeError) as e:
        raise MetricsError(f"GET {url} answered garbage: {e}") from None
    if not (c.present or c.other_vllm or named):
        return None
    return "" if c.present else f"no spec-decode counters on {row.counters_path} yet (no speculation configured?)"


async def _probe_server_info(client: httpx.AsyncClient, base: str, timeout: float, row: Serving, named: bool) -> str | None:
    """The note when `row.server_info_path` holds internal_states (or the engine was named), else None."""
    try:
        info = await get_json(client, f"{base}{row.server_info_path}", timeout)
    except ServerError:
        if named:
            raise
        return None
    if isinstance(info, dict) and "internal_states" in info:
        sglang_server_info_mal(info)  # validates
        return ""
    return f"{row.server_info_path} has no internal_states; acceptance only from per-request meta_info" if named else None


async def _stable(client, base, path, timeout) -> SpecCounters:
    """Scrape until two reads agree (counters are updated a moment after the last response), max ~2 s."""
    prev = await _scrape(client, base, path, timeout)
    for _ in range(8):
        await asyncio.sleep(0.25)
        cur = await _scrape(client, base, path, timeout)
        if (cur.drafts, cur.accepted, cur.draft_tokens) == (prev.drafts, prev.accepted, prev.draft_tokens):
            return cur
        prev = cur
    return prev


# ---- the run ------------------------------------------------------------------------------------------


async def _level(
    client: httpx.AsyncClient,
    srv: ServerRun,
    cfg: BenchConfig,
    conc: int,
    on_done: Callable[[], None],
    offset: int,
) -> LevelResult:
    n = max(cfg.num_prompts, conc)
    lv = LevelResult(concurrency=conc, requests=n)
    extra = (srv.row.request_extra if srv.row else None) or None
    queue: asyncio.Queue[list[int]] = asyncio.Queue()
    for i in range(n):
        queue.put_nowait(srv.prompt_ids[(offset + i) % len(srv.prompt_ids)])
    results: list[RequestResult] = []
    failed = asyncio.Event()

    async def worker():
        while not failed.is_set():
            try:
                p = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            r = await stream_completion(client, srv.url, srv.model, p, cfg.max_tokens, cfg.timeout, extra)
            results.append(r)
            on_done()
            if not r.ok:
                lv.errors.append(r.error)
                if len(lv.errors) > cfg.max_errors:
                    failed.set()
                    return

    t0 = time.perf_counter()
    tasks = [asyncio.create_task(worker()) for _ in range(conc)]
    try:
        waiter = asyncio.create_task(failed.wait())
        pending = set(tasks)
        while pending and not failed.is_set():
            done, pending = await asyncio.wait(pending | {waiter}, return_when=asyncio.FIRST_COMPLETED)
            pending.discard(waiter)
        waiter.cancel()
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    lv.wall_s = time.perf_counter() - t0
    good = [r for r in results if r.ok]
    lv.ok = len(good)
    lv.output_tokens = sum(r.output_tokens for r in good)
    lv.ttft = percentiles([r.ttft for r in good if r.ttft is not None])
    lv.itl = percentiles([x for r in good for x in r.itl])
    lv.tpot = percentiles(
        [(r.latency - r.ttft) / (r.output_tokens - 1) for r in good if r.output_tokens > 1 and r.latency and r.ttft is not None]
    )
    if extra:
        lv.acceptance = sglang_request_acceptance([(r.output_tokens, r.spec) for r in good if r.spec])
    if failed.is_set():
        first = lv.errors[0]
        raise Aborted(
            f"{srv.role} server {srv.url}: {len(lv.errors)} request(s) failed at concurrency {conc} "
            f"(allowed {cfg.max_errors}); first: {first}"
        )
    return lv


async def _run_server(srv: ServerRun, cfg: BenchConfig, progress) -> None:
    probe_t = min(cfg.timeout, 15.0)
    limits = httpx.Limits(max_connections=max(cfg.concurrency) + 4, max_keepalive_connections=max(cfg.concurrency) + 4)
    timeout = httpx.Timeout(cfg.timeout, connect=min(cfg.timeout, 10.0))
    async with httpx.AsyncClient(limits=limits, timeout=timeout, trust_env=False) as client:
        wanted = cfg.model if srv.role == "spec" else (cfg.baseline_model or None)
        srv.model = wanted or await served_model(client, srv.url, probe_t)
        if srv.role == "spec":
            srv.engine, srv.note = await detect_engine(client, srv.url, probe_t, cfg.engine)
        # only the prompts this run sends are tokenized (levels continue where the last one stopped)
        used = min(len(cfg.prompts), max(cfg.warmup, sum(max(cfg.num_prompts, c) for c in cfg.concurrency)))
        srv.prompt_ids, note = await server_token_ids(client, srv.url, srv.model, cfg.prompts[:used], cfg.prompt_format, probe_t)
        srv.note = "; ".join(x for x in (srv.note, note) if x)
        for i in range(cfg.warmup):
            r = await stream_completion(client, srv.url, srv.model, srv.prompt_ids[i % used], min(cfg.max_tokens, 16), cfg.timeout)
            if not r.ok:
                raise Aborted(f"{srv.role} server {srv.url}: warm-up request failed: {r.error}")
        counters = srv.row.counters_path if srv.row else ""
        total_before = await _stable(client, srv.url, counters, probe_t) if counters else None
        offset = 0
        for conc in cfg.concurrency:
            n = max(cfg.num_prompts, conc)
            task = progress.add(f"{srv.role} c={conc}", n) if progress else None
            before = await _scrape(client, srv.url, counters, probe_t) if counters else None
            try:
                lv = await _level(client, srv, cfg, conc, (lambda t=task: progress.advance(t)) if progress else (lambda: None), offset)
            finally:
                if progress:
                    progress.finish(task)
            offset += n
            if counters:
                after = await _stable(client, srv.url, counters, probe_t)
                lv.acceptance = vllm_acceptance(after.minus(before))
            srv.levels.append(lv)
        if counters:
            end = await _scrape(client, srv.url, counters, probe_t)
            srv.acceptance = vllm_acceptance(end.minus(total_before))
        elif srv.row:
            await _request_and_server_info_acceptance(client, srv, probe_t)


async def _request_and_server_info_acceptance(client: httpx.AsyncClient, srv: ServerRun, probe_t: float) -> None:
    """An engine without counters: acceptance over the run from the per-request details, with the server's
    own cumulative accept length (its `server_info_path`) beside it."""
    per = [lv.acceptance for lv in srv.levels if lv.acceptance]
    if per:
        tok = sum((a.mal or 0) * (a.drafts or 0) for a in per)
        ver = sum(a.drafts or 0 for a in per)
        srv.acceptance = Acceptance("sglang meta_info", drafts=ver, mal=tok / ver if ver else None)
    path = srv.row.server_info_path
    try:
        mal = sglang_server_info_mal(await get_json(client, f"{srv.url}{path}", probe_t)) if path else None
    except ServerError:
        mal = None
    if mal is None:
        return
    if srv.acceptance is None:
        srv.acceptance = Acceptance(f"sglang {path}", mal=mal, note="cumulative since the server started")
    else:
        srv.acceptance.note = f"{path} avg_spec_accept_length (cumulative since start): {mal:.3f}"


async def run_bench(cfg: BenchConfig, progress=None) -> BenchReport:
    rep = BenchReport(cfg)
    t0 = time.perf_counter()
    order = [ServerRun("spec", cfg.url.rstrip("/"))]
    if cfg.baseline_url:
        order.append(ServerRun("baseline", cfg.baseline_url.rstrip("/")))
    try:
        for srv in order:
            rep.servers.append(srv)
            await _run_server(srv, cfg, progress)
    except Aborted as e:
        rep.error = str(e)
    except MetricsError as e:
        rep.error = f"{rep.servers[-1].role} server {rep.servers[-1].url}: untrustworthy metrics: {e}"
    except ServerError as e:
        rep.error = f"{rep.servers[-1].role} server {rep.servers[-1].url}: {e}"
    rep.wall_s = time.perf_counter() - t0
    return rep
