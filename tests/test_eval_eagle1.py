"""Offline acceptance of EAGLE-1/2 drafters (eval/run.py evaluate_eagle1, model/eagle1.py):
(a) the parallel eval counts exactly what a plain token-by-token speculative decode counts;
(b) the drafter's forward equals one written with transformers' own Llama decoder layers (cnets.py's structure);
(c) the CLI measures a research-layout checkpoint, and `--engine` follows check's load report (vLLM ignores fc.bias)."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")


from eval_reference import PROMPTS, eval_cli, plain_speculative_decode, write_prompts  # noqa: E402

from specbridge.eval.run import evaluate_eagle1  # noqa: E402
from specbridge.model.drafter import KVCache  # noqa: E402
from specbridge.model.eagle1 import Eagle1Config, Eagle1Drafter  # noqa: E402

pytestmark = pytest.mark.ml  # the ml tier: torch (./setup.sh --ml)

torch.set_num_threads(1)

VOCAB, H = 96, 64  # a small vocab: the drafts are sometimes right, so the counts mean something


def tiny_target(seed: int = 0):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    cfg = LlamaConfig(
        vocab_size=VOCAB,
        hidden_size=H,
        intermediate_size=128,
        num_hidden_layers=3,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=32,
        max_position_embeddings=512,
        tie_word_embeddings=False,
    )
    m = LlamaForCausalLM(cfg).eval()
    with torch.no_grad():  # sharper logits: a random target that keeps to a few tokens, as real text does
        m.lm_head.weight.mul_(8.0)
    return m


def tiny_drafter(target, seed: int = 1, noise: float = 0.05, layers: int = 1, bias_scale: float = 0.0) -> Eagle1Drafter:
    """Random weights around a drafter that can guess: fc passes the target's feature on, so the target's head reads
    back the token it already chose (right wherever the target repeats itself); fc.bias scaled by `bias_scale`."""
    torch.manual_seed(seed)
    c = Eagle1Config(
        hidden_size=H,
        intermediate_size=96,
        num_heads=2,
        num_kv_heads=1,
        head_dim=32,
        num_layers=layers,
        vocab_size=VOCAB,
        head_vocab=VOCAB,
        rope_theta=10000.0,
    )
    d = Eagle1Drafter(c)
    with torch.no_grad():
        for name, p in d.named_parameters():
            norm = "norm" in name
            p.copy_((1.0 if norm else 0.0) + noise * torch.randn_like(p))
        d.fc.weight[:, H:] += torch.eye(H)
        d.fc.bias.copy_(bias_scale * torch.randn(H))
        d.embed_tokens.weight.copy_(target.get_input_embeddings().weight)
        d.lm_head.weight.copy_(target.get_output_embeddings().weight)
    return d.eval()


@torch.no_grad()
def plain_decode(target, drafter: Eagle1Drafter, prompt: list[int], k: int, max_new: int) -> tuple[int, int]:
    """Speculative decoding step by step, as an engine runs it: the target's final hidden states of the verified
    prefix, the drafter's cached forward over (token after, state) pairs, then k - 1 single-token steps feeding its own
    hidden state and token back; the target verifies greedily; advance by accepted + 1. Target and drafter are run
    from scratch every step (no cache kept, nothing shared with eval's all-rows pass)."""

    def draft(seq: list[int]) -> list[int]:
        n = len(seq) - 1
        feature = target.model(torch.tensor([seq[:-1]])).last_hidden_state  # post-norm states of positions 0..n-1
        caches = [KVCache() for _ in drafter.layers]
        logits, hidden = drafter(torch.tensor([seq[1:]]), feature, torch.arange(n)[None], caches)
        tok, h = int(logits[0, -1].argmax()), hidden[:, -1:]
        chain = [tok]
        for j in range(1, k):
            logits, h = drafter(torch.tensor([[tok]]), h, torch.tensor([[n - 1 + j]]), caches)
            tok = int(logits[0, -1].argmax())
            chain.append(tok)
        return chain

    return plain_speculative_decode(target, prompt, k, max_new, draft)


@pytest.mark.parametrize("k,variant", [(3, {}), (4, {"layers": 2, "noise": 0.1}), (2, {"bias_scale": 0.5})])
def test_parallel_eval_equals_plain_speculative_decoding(k, variant):
    target = tiny_target()
    drafter = tiny_drafter(target, **variant)
    max_new = 24
    res = evaluate_eagle1(target, drafter, PROMPTS, k=k, max_new=max_new)
    plain = [plain_decode(target, drafter, p, k, max_new) for p in PROMPTS]
    assert [(r.drafts, r.accepted) for r in res.prompts] == plain
    assert sum(a for _, a in plain) >= 4, plain  # the comparison is about something


# --- (b) the forward against transformers' Llama decoder layers -------------------------------------------------------


@torch.no_grad()
def test_forward_equals_transformers_llama_layers():
    """cnets.py's structure with transformers' LlamaDecoderLayer (layer 0's input_layernorm an identity, no final
    norm, the head on the last layer's output) over one causal sequence equals the drafter's cached forward."""
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaDecoderLayer, LlamaRotaryEmbedding

    target = tiny_target()
    d = tiny_drafter(target, layers=2, noise=0.2, bias_scale=0.3)
    c = d.c
    cfg = LlamaConfig(
        hidden_size=H,
        intermediate_size=c.intermediate_size,
        num_attention_heads=c.num_heads,
        num_key_value_heads=c.num_kv_heads,
        head_dim=c.head_dim,
        rope_theta=c.rope_theta,
        rms_norm_eps=c.rms_norm_eps,
        num_hidden_layers=c.num_layers,
    )
    cfg._attn_implementation = "sdpa"
    layers = []
    for i, mine in enumerate(d.layers):
        ref = LlamaDecoderLayer(cfg, i).eval()
        sd = {n: t for n, t in mine.state_dict().items()}
        if i == 0:
            ref.input_layernorm = torch.nn.Identity()
        ref.load_state_dict(sd, strict=True)
        layers.append(ref)
    g = torch.Generator().manual_seed(5)
    T = 11
    feature, ids = torch.randn(1, T, H, generator=g), torch.randint(0, VOCAB, (1, T), generator=g)
    pos = torch.arange(T)[None]
    x = d.fc(torch.cat([d.embed_tokens(ids), feature], -1))
    emb = LlamaRotaryEmbedding(cfg)(x, pos)
    mask = torch.full((T, T), float("-inf")).triu(1)[None, None]
    for layer in layers:
        out = layer(x, attention_mask=mask, position_ids=pos, position_embeddings=emb)
        x = out[0] if isinstance(out, tuple) else out
    logits, _ = d(ids, feature, pos, [KVCache() for _ in d.layers])
    torch.testing.assert_close(logits, d.lm_head(x), atol=1e-5, rtol=1e-5)
    # the all-rows chain's step 0 is the same causal pass
    torch.testing.assert_close(d.chain_rows(feature[0], ids[0], 1)[0], logits[0], atol=1e-5, rtol=1e-5)


# --- (c) the CLI -----------------------------------------------------------------------------------------------------


def _write_pair(tmp_path, arch: str = "LlamaForCausalLM"):
    """A tiny random Llama target (vocab 96) and an EAGLE-1 drafter in the research layout (fc.weight and fc.bias,
    layers.0.* without input_layernorm, embed_tokens; no lm_head: the target's), its fc.bias large enough to matter."""
    import eagle1_fixtures as e1
    from conftest import write_checkpoint

    target = tiny_target()
    tdir = tmp_path / "target"
    target.save_pretrained(tdir)
    d = tiny_drafter(target, bias_scale=0.5)
    ts = {n: t.numpy().astype(np.float32) for n, t in d.state_dict().items() if n != "lm_head.weight"}
    c = d.c
    cfg = e1.config(
        architectures=[arch],
        hidden_size=H,
        num_attention_heads=c.num_heads,
        num_key_value_heads=c.num_kv_heads,
        head_dim=c.head_dim,
        intermediate_size=c.intermediate_size,
        vocab_size=VOCAB,
        rope_theta=c.rope_theta,
    )
    ddir = write_checkpoint(tmp_path / arch, cfg, ts)
    prompts = write_prompts(tmp_path / "p.jsonl")
    return ddir, tdir, prompts, target, d


def test_cli_eval_eagle1_and_engines(tmp_path):
    ddir, tdir, prompts, target, d = _write_pair(tmp_path)
    out = eval_cli(ddir, tdir, prompts)
    assert out["family"] == "eagle" and out["steps"] == 3 and out["fc_bias_applied"], out
    # the CLI's numbers are the library's on the same drafter (fc.bias applied, the target's head)
    lib = evaluate_eagle1(target, d, PROMPTS, k=3, max_new=16)
    assert (out["accepted"], out["drafts"]) == (lib.summary.accepted, lib.summary.drafts) and out["accepted"] > 0
    # vLLM 0.32.0 builds fc without a bias (llama_eagle.py): the trained bias is not applied, the numbers change, and eval says why
    v = eval_cli(ddir, tdir, prompts, "--engine", "vllm==0.32.0")
    assert v["engine"]["class"] == "EagleLlamaForCausalLM" and not v["fc_bias_applied"]
    assert any("fc.bias is not applied" in n for n in v["notes"]), v["notes"]
    assert any(f["code"] == "L013" for f in v["findings"])
    assert (v["accepted"], v["per_prompt"]) != (out["accepted"], out["per_prompt"])
    no_bias = tiny_drafter(target, bias_scale=0.5)
    no_bias.fc.bias = None
    ref = evaluate_eagle1(target, no_bias, PROMPTS, k=3, max_new=16)
    assert (v["accepted"], v["drafts"]) == (ref.summary.accepted, ref.summary.drafts)


def test_cli_eval_eagle1_sglang(tmp_path):
    """SGLang's LlamaForCausalLMEagle builds and loads fc.bias (and swaps in the target's embedding, equal here): the
    numbers as trained; the plain LlamaForCausalLM name is refused (SGLang would build a target class, check's L005)."""
    ddir, tdir, prompts, *_ = _write_pair(tmp_path, arch="LlamaForCausalLMEagle")
    out = eval_cli(ddir, tdir, prompts, "--steps", "2")
    sg = eval_cli(ddir, tdir, prompts, "--steps", "2", "--engine", "sglang==0.5.23")
    assert sg["fc_bias_applied"] and (sg["accepted"], sg["per_prompt"]) == (out["accepted"], out["per_prompt"])
    from conftest import run_cli

    plain, *_ = _write_pair(tmp_path / "plain")
    r = run_cli("eval", plain, "--target", tdir, "--prompts", prompts, "--engine", "sglang==0.5.23", "--json")
    assert r.returncode == 1 and "L005" in json.loads(r.stdout)["refused"], r.stdout
    r = run_cli("eval", plain, "--target", tdir, "--prompts", prompts, "--topk", "2")
    assert r.returncode == 2 and "chains" in r.stderr, r.stderr
