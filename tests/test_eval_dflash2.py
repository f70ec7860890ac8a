"""Offline acceptance of DFlash2 drafters (model/dflash.py GroupedConv and CandidateSelector, eval/run.py):
(a) the block forward and the candidate selector's walk equal z-lab's own DFlash2DraftModel (PyPI `dflash` 0.1.0);
(b) the parallel eval counts exactly what a plain token-by-token speculative decode counts, its drafts from z-lab's
    model (forward + propose, or per-slot argmax as vLLM 0.28.0's V1 runner drafts);
(c) the CLI measures a DFlash2 checkpoint as trained and as vLLM loads it (V2: the selector; V1: per-slot argmax on
    0.28.0, refused from 0.29.0)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from eval_reference import PROMPTS, eval_cli, plain_speculative_decode, write_prompts  # noqa: E402
from test_eval_dflash import IDS, NL, VOCAB, _inputs, tiny_drafter, tiny_target  # noqa: E402

from specbridge.eval.run import evaluate_dflash  # noqa: E402
from specbridge.model.dflash import DFlashConfig, DFlashDrafter  # noqa: E402

pytestmark = pytest.mark.ml  # the ml tier: torch (./setup.sh --ml)

torch.set_num_threads(1)

TAPS, GROUP, RANK, TOP_K = 2, 16, 8, 4
EXTRA = {"input_embedding_scale": 1.25, "output_multiplier": 0.8, "final_logit_softcapping": 30.0}


def tiny_drafter2(target, seed: int = 1, noise: float = 0.05, pair: float = 1.0) -> DFlashDrafter:
    """tiny_drafter's guessing DFlash weights inside a DFlash2: near-identity convolutions (tap 0 ≈ 1, the earlier
    slot's tap small, a small dynamic part) and a selector whose pair scores (scale `pair`) are large enough to
    overrule the head's argmax at some slots."""
    base = tiny_drafter(target, seed=seed, noise=noise)
    c = DFlashConfig(**{**base.c.__dict__, "conv_taps": TAPS, "conv_group": GROUP, "selector_rank": RANK, "selector_top_k": TOP_K})
    c.embed_scale, c.output_multiplier, c.softcap = EXTRA.values()
    d = DFlashDrafter(c)
    missing, unexpected = d.load_state_dict(base.state_dict(), strict=False)
    assert not unexpected and all("conv" in n or "candidate_selector" in n for n in missing), missing
    g = torch.Generator().manual_seed(seed + 10)
    with torch.no_grad():
        for layer in d.layers:
            for conv in (layer.attention_conv, layer.mlp_conv):
                conv.base_kernel.copy_(0.1 * torch.randn(conv.base_kernel.shape, generator=g))
                conv.base_kernel[:, 0] += 1.0
                conv.kernel_projection.weight.copy_(0.02 * torch.randn(conv.kernel_projection.weight.shape, generator=g))
        sel = d.candidate_selector
        for p in (sel.predecessor_codebook, sel.successor_codebook):
            p.copy_(pair * torch.randn(p.shape, generator=g))
        sel.hidden_projection.weight.copy_(0.3 * torch.randn(sel.hidden_projection.weight.shape, generator=g))
    return d.eval()


def zlab_model(d: DFlashDrafter):
    """z-lab's DFlash2DraftModel holding d's weights (its codebooks are nn.Embedding: `.weight` names)."""
    from dflash.model import DFlash2DraftModel
    from transformers import Qwen3Config

    c = d.c
    dc = {"target_layer_ids": IDS, "mask_token_id": c.mask_token_id, "block_size": c.block_size, **EXTRA}
    dc |= {"conv_kernel_size": TAPS, "conv_group_size": GROUP, "selector_rank": RANK, "selector_top_k": TOP_K}
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
        dflash_config=dc,
        num_target_layers=NL,
    )
    z = DFlash2DraftModel(cfg).eval()
    sd = {
        (n + ".weight" if n.endswith("_codebook") else n): t
        for n, t in d.state_dict().items()
        if n not in ("embed_tokens.weight", "lm_head.weight", "d2t")
    }
    z.load_state_dict(sd, strict=True)
    return z


@torch.no_grad()
def zlab_block(z, d: DFlashDrafter, aux: torch.Tensor, seq: list[int], r: int, k: int, selector: bool):
    """z-lab's dflash_generate draft step at row r: context aux[0..r], block [seq[r+1], mask × k]; its noise embedding
    is the target's embedding × input_embedding_scale, its head the target's (here d's, a copy of the target's)."""
    block = torch.tensor([seq[r + 1]] + [d.c.mask_token_id] * k)
    noise = torch.nn.functional.embedding(block, d.embed_tokens.weight)[None] * EXTRA["input_embedding_scale"]
    hidden = z(position_ids=torch.arange(0, r + 2 + k)[None], noise_embedding=noise, target_hidden=aux[None, : r + 1])[:, 1:]
    if selector:
        tokens = z.propose(hidden, block[None, 0], d.lm_head, 0.0)[0]
    else:
        tokens = z.compute_logits(hidden, d.lm_head).argmax(-1)
    return hidden[0], tokens[0].tolist()


# --- (a) forward and selector against z-lab's package ---------------------------------------------------------------


@torch.no_grad()
def test_dflash2_forward_and_selector_equal_zlab_package():
    pytest.importorskip("dflash.model")
    d = tiny_drafter2(tiny_target(), noise=0.3)
    z = zlab_model(d)
    k = 3
    aux, ids = _inputs(k)
    rows = torch.tensor([0, 5, 12, 19])
    logits = d.draft_rows(aux, ids, rows, k)
    tokens = d.draft_tokens(aux, ids, rows, k)
    argmax_differs = 0
    for i, r in enumerate(rows.tolist()):
        hidden, ref_tokens = zlab_block(z, d, aux, ids.tolist(), r, k, selector=True)
        torch.testing.assert_close(logits[i], d.lm_head(hidden), atol=1e-5, rtol=1e-5)
        assert tokens[i].tolist() == ref_tokens
        argmax_differs += tokens[i].tolist() != logits[i].argmax(-1).tolist()
    assert argmax_differs, "the selector never overruled the head's argmax: the walk is not exercised"
    d.use_selector = False  # V1's per-slot argmax
    assert d.draft_tokens(aux, ids, rows, k).tolist() == logits.argmax(-1).tolist()


# --- (b) parallel eval against a plain loop drafting with z-lab's model ---------------------------------------------


@torch.no_grad()
def plain_decode2(target, d, z, prompt: list[int], k: int, max_new: int, selector: bool) -> tuple[int, int]:
    """test_eval_dflash.plain_decode, the drafts from z-lab's DFlash2DraftModel (its forward, then propose or argmax)."""

    def draft(seq: list[int]) -> list[int]:
        hs = target(torch.tensor([seq[:-1]]), output_hidden_states=True).hidden_states
        aux = torch.cat([hs[i + 1][0] for i in IDS], -1)
        return zlab_block(z, d, aux, seq, len(seq) - 2, k, selector)[1]

    return plain_speculative_decode(target, prompt, k, max_new, draft)


@pytest.mark.parametrize("selector", [True, False])
def test_dflash2_parallel_eval_equals_plain_speculative_decoding(selector):
    pytest.importorskip("dflash.model")
    target = tiny_target()
    d = tiny_drafter2(target, pair=0.5)
    d.use_selector = selector
    z = zlab_model(d)
    k, max_new = 3, 24
    res = evaluate_dflash(target, d, PROMPTS, [i + 1 for i in IDS], k=k, max_new=max_new)
    plain = [plain_decode2(target, d, z, p, k, max_new, selector) for p in PROMPTS]
    assert [(r.drafts, r.accepted) for r in res.prompts] == plain
    assert sum(a for _, a in plain) >= 4, plain  # the comparison is about something


# --- (c) the CLI ------------------------------------------------------------------------------------------------------


def _write_pair2(tmp_path):
    """A tiny Qwen3 target and a DFlash2 drafter over its layers 0..2, written as z-lab's DFlash2 layout (the
    selector's codebooks without `.weight`, vLLM's parameter names; embed/lm_head shared from the target)."""
    import dflash_fixtures as fx

    target = tiny_target()
    tdir = tmp_path / "target"
    target.save_pretrained(tdir)
    d = tiny_drafter2(target, pair=0.5)
    c = d.c
    ts = {n: t.numpy().astype(np.float32) for n, t in d.state_dict().items() if n not in ("embed_tokens.weight", "lm_head.weight", "d2t")}
    dc = {"target_layer_ids": IDS, "mask_token_id": c.mask_token_id, "block_size": 4, **fx.DFLASH2, **EXTRA}
    dc |= {"conv_kernel_size": TAPS, "conv_group_size": GROUP, "selector_rank": RANK, "selector_top_k": TOP_K}
    cfg = fx.config2(
        hidden_size=c.hidden_size,
        num_hidden_layers=c.num_layers,
        num_attention_heads=c.num_heads,
        num_key_value_heads=c.num_kv_heads,
        head_dim=c.head_dim,
        intermediate_size=c.intermediate_size,
        vocab_size=VOCAB,
        dflash_config=dc,
    )
    ddir = fx.write(tmp_path / "draft", cfg, ts)
    prompts = write_prompts(tmp_path / "p.jsonl")
    return ddir, tdir, prompts


def test_cli_eval_dflash2(tmp_path):
    from conftest import run_cli

    ddir, tdir, prompts = _write_pair2(tmp_path)
    out = eval_cli(ddir, tdir, prompts)
    assert out["family"] == "dflash2" and out["candidate_selector"] is True and out["steps"] == 3
    assert 1.0 <= out["mean_accept_length"] <= 4.0 and out["drafts"] > 0
    # vLLM's V2 runner runs the selector: the numbers as trained
    v2 = eval_cli(ddir, tdir, prompts, "--engine", "vllm==0.32.0")
    assert (v2["accepted"], v2["per_prompt"]) == (out["accepted"], out["per_prompt"]) and v2["candidate_selector"] is True
    assert any("Model Runner V2" in n for n in v2["notes"]), v2["notes"]
    # 0.28.0 on V1: the same weights, per-slot argmax (the selector never called); the drafts change
    v1 = eval_cli(ddir, tdir, prompts, "--engine", "vllm==0.28.0", "--model-runner", "v1")
    assert v1["candidate_selector"] is False and any("base DFlash" in n for n in v1["notes"]), v1["notes"]
    assert (v1["accepted"], v1["per_prompt"]) != (out["accepted"], out["per_prompt"])

    def run(*args):
        r = run_cli("eval", *args, "--target", tdir, "--prompts", prompts, "--json")
        return r.returncode, r.stdout + r.stderr

    # from 0.29.0 V1 refuses the drafter (exit 1, the engine's message)
    code, text = run(ddir, "--engine", "vllm==0.29.0", "--model-runner", "v1")
    assert code == 1 and "Model Runner V1 does not support: dflash2 drafts" in text, text
