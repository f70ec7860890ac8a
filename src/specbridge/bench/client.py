"""Async OpenAI-compatible streaming client: bounded reads, one deadline per request, errors as values."""

from __future__ import annotations

import asyncio
import json
import time

import httpx

from ..prompts import completion_params
from ..record import field, record
from .metrics import find_spec_details

MAX_STREAM_BYTES = 16 << 20  # one streamed completion
MAX_LINE_BYTES = 1 << 20  # one SSE line
MAX_BODY_BYTES = 8 << 20  # /metrics, /v1/models, /server_info


class ServerError(RuntimeError):
    """The server answered wrongly, too slowly, too much, or not at all."""


@record(frozen=False)
class RequestResult:
    ok: bool
    error: str = ""
    ttft: float | None = None  # seconds to the first streamed token chunk
    latency: float | None = None  # seconds to the end of the stream
    itl: list[float] = field(default_factory=list)  # gaps between token chunks (s)
    output_tokens: int = 0
    tokens_from_usage: bool = False
    spec: dict | None = None  # SGLang per-request spec details, if the server sent them


def _short(text: str, n: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def describe_exc(e: BaseException, timeout: float) -> str:
    if isinstance(e, (asyncio.TimeoutError, httpx.TimeoutException)):
        return f"timed out after {timeout:g} s (no complete answer)"
    if isinstance(e, httpx.ConnectError):
        return f"cannot connect: {_short(str(e)) or type(e).__name__}"
    if isinstance(e, httpx.RemoteProtocolError):
        return f"connection closed mid-response: {_short(str(e)) or type(e).__name__}"
    if isinstance(e, httpx.HTTPError):
        return f"{type(e).__name__}: {_short(str(e))}"
    return f"{type(e).__name__}: {_short(str(e))}"


async def _bounded(client: httpx.AsyncClient, method: str, url: str, timeout: float, limit: int, **kw) -> tuple[int, bytes]:
    """One request with a total deadline and a cap on the body size: (status, body). Raises ServerError."""

    async def go():
        async with client.stream(method, url, **kw) as r:
            buf = bytearray()
            async for chunk in r.aiter_bytes():
                buf += chunk
                if len(buf) > limit:
                    raise ServerError(f"{method} {url}: body larger than {limit >> 20} MiB")
            return r.status_code, bytes(buf)

    try:
        return await asyncio.wait_for(go(), timeout)
    except ServerError:
        raise
    except (asyncio.TimeoutError, httpx.HTTPError, OSError) as e:
        raise ServerError(f"{method} {url}: {describe_exc(e, timeout)}") from None


async def get_bounded(client: httpx.AsyncClient, url: str, timeout: float, limit: int = MAX_BODY_BYTES) -> tuple[int, bytes]:
    """GET with a total deadline and a cap on the body size. Raises ServerError."""
    return await _bounded(client, "GET", url, timeout, limit)


async def get_json(client: httpx.AsyncClient, url: str, timeout: float):
    status, body = await get_bounded(client, url, timeout)
    if status != 200:
        raise ServerError(f"GET {url}: HTTP {status}: {_short(body.decode('utf-8', 'replace'))}")
    try:
        return json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise ServerError(f"GET {url}: not JSON: {_short(body[:200].decode('utf-8', 'replace'))!r}") from None


async def post_json(client: httpx.AsyncClient, url: str, body: dict, timeout: float) -> tuple[int, object]:
    """POST a JSON body with a total deadline and a bounded answer: (status, the JSON answer, or the text
    when it is not JSON). Raises ServerError when nothing usable comes back."""
    status, raw = await _bounded(client, "POST", url, timeout, MAX_BODY_BYTES, json=body)
    try:
        return status, json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return status, _short(raw[:400].decode("utf-8", "replace"))


async def served_model(client: httpx.AsyncClient, base: str, timeout: float) -> str:
    data = await get_json(client, f"{base}/v1/models", timeout)
    try:
        return str(data["data"][0]["id"])
    except (KeyError, IndexError, TypeError):
        raise ServerError(f"GET {base}/v1/models: no model listed") from None


async def _sse_lines(resp: httpx.Response):
    buf = bytearray()
    total = 0
    async for chunk in resp.aiter_bytes():
        total += len(chunk)
        if total > MAX_STREAM_BYTES:
            raise ServerError(f"streamed response larger than {MAX_STREAM_BYTES >> 20} MiB")
        buf += chunk
        while True:
            i = buf.find(b"\n")
            if i < 0:
                break
            if i > MAX_LINE_BYTES:
                raise ServerError(f"one stream line longer than {MAX_LINE_BYTES >> 20} MiB")
            line = bytes(buf[:i]).rstrip(b"\r")
            del buf[: i + 1]
            yield line
        if len(buf) > MAX_LINE_BYTES:
            raise ServerError(f"one stream line longer than {MAX_LINE_BYTES >> 20} MiB")
    if buf.strip():
        yield bytes(buf)


async def stream_completion(
    client: httpx.AsyncClient,
    base: str,
    model: str,
    prompt: str | list[int],
    max_tokens: int,
    timeout: float,
    extra: dict | None = None,
) -> RequestResult:
    """One streamed /v1/completions request (a prompt of token ids, or text), by the one stopping rule
    (specbridge.prompts.completion_params); never raises for server faults (they become .error)."""
    body = {
        "model": model,
        "prompt": prompt,
        **completion_params(max_tokens),
        "stream": True,
        "stream_options": {"include_usage": True},
        **(extra or {}),
    }
    res = RequestResult(ok=False)
    t0 = time.perf_counter()

    async def go():
        last = None
        chunks = 0
        done = False
        async with client.stream("POST", f"{base}/v1/completions", json=body) as r:
            if r.status_code != 200:
                text = b""
                async for c in r.aiter_bytes():
                    text += c
                    if len(text) > 4096:
                        break
                raise ServerError(f"HTTP {r.status_code}: {_short(text.decode('utf-8', 'replace'))}")
            async for line in _sse_lines(r):
                if not line.startswith(b"data:"):
                    continue
                data = line[5:].strip()
                if data == b"[DONE]":
                    done = True
                    break
                try:
                    obj = json.loads(data)
                except (json.JSONDecodeError, UnicodeDecodeError):
                    raise ServerError(f"stream chunk is not JSON: {_short(data[:120].decode('utf-8', 'replace'))!r}") from None
                if not isinstance(obj, dict):
                    raise ServerError("stream chunk is not a JSON object")
                if "error" in obj:
                    raise ServerError(f"server error in stream: {_short(json.dumps(obj['error']))}")
                now = time.perf_counter()
                choices = obj.get("choices") or []
                if choices:
                    if res.ttft is None:
                        res.ttft = now - t0
                    elif last is not None:
                        res.itl.append(now - last)
                    last = now
                    chunks += 1
                usage = obj.get("usage")
                if isinstance(usage, dict) and isinstance(usage.get("completion_tokens"), int):
                    res.output_tokens = usage["completion_tokens"]
                    res.tokens_from_usage = True
                spec = find_spec_details(obj)
                if spec:
                    res.spec = spec
        if not done:
            raise ServerError("stream ended without [DONE] (connection closed mid-stream?)")
        if res.ttft is None:
            raise ServerError("stream carried no completion chunk")
        if not res.tokens_from_usage:
            res.output_tokens = chunks
        res.latency = time.perf_counter() - t0

    try:
        await asyncio.wait_for(go(), timeout)
        res.ok = True
    except ServerError as e:
        res.error = str(e)
    except asyncio.CancelledError:
        raise
    except (asyncio.TimeoutError, httpx.HTTPError, OSError) as e:
        res.error = describe_exc(e, timeout)
    return res
