"""Offline acceptance of DSpark drafters (model/dflash.py MarkovHead, markov_walk, ConfidenceHead; eval/run.py):
(a) the block forward (DFlash's backbone over [anchor, mask × (k-1)]), the Markov walk (dense and top-k) and the
    confidence head equal a reference written from DeepSpec's Qwen3DSparkModel (the backbone, in z-lab's structure:
    test_eval_dflash.zlab_reference_forward) and vLLM 0.32.0's DSparkSpeculator._sample_sequential(_topk) and
    DSparkMarkovHead.apply_bias_gathered, one row at a time;
(b) the parallel eval counts exactly what a plain token-by-token speculative decode counts, drafting with that
    reference;
(c) the CLI measures a DSpark checkpoint as trained and as vLLM 0.32.0 loads it (Model Runner V2; V1 refuses)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

import torch.nn.functional as F  # noqa: E402
from eval_reference import PROMPTS, eval_cli, plain_speculative_decode, write_prompts  # noqa: E402
from test_eval_dflash import IDS, VOCAB, _inputs, tiny_drafter, tiny_target, zlab_reference_forward  # noqa: E402

from specbridge.eval.run import evaluate_dflash  # noqa: E402
from specbridge.model.dflash import DFlashConfig, DFlashDrafter  # noqa: E402

pytestmark = pytest.mark.ml  # the ml tier: torch (./setup.sh --ml)

torch.set_num_threads(1)

RANK = 8


def tiny_dspark(target, seed: int = 1, noise: float = 0.05, markov: float = 1.0, topk: int | None = None, anchor: bool = True):
    """tiny_drafter's guessing DFlash weights inside a DSpark: a Markov head whose bias (scale `markov`) overrules the
    head's argmax at some slots, a confidence head reading the Markov embedding."""
    base = tiny_drafter(target, seed=seed, noise=noise)
    over = dict(dspark=True, markov_rank=RANK, markov_topk=topk, sample_from_anchor=anchor, confidence=True, confidence_with_markov=True)
    d = DFlashDrafter(DFlashConfig(**{**base.c.__dict__, **over}))
    missing, unexpected = d.load_state_dict(base.state_dict(), strict=False)
    assert not unexpected and all("markov" in n or "confidence" in n for n in missing), missing
    g = torch.Generator().manual_seed(seed + 20)
    with torch.no_grad():
        d.markov_head.markov_w1.weight.copy_(markov * torch.randn(d.markov_head.markov_w1.weight.shape, generator=g))
        d.markov_head.markov_w2.weight.copy_(markov * torch.randn(d.markov_head.markov_w2.weight.shape, generator=g))
        for p in d.confidence_head.parameters():
            p.copy_(0.3 * torch.randn(p.shape, generator=g))
    return d.eval()


@torch.no_grad()
def reference_step(d: DFlashDrafter, aux: torch.Tensor, seq: list[int], r: int, k: int):
    """One DSpark draft step at row r, written apart from model/dflash.py: the backbone in z-lab's structure over
    DeepSpec's block (create_noise_embed: the anchor, then mask tokens; positions r+1 …, every slot predicting the next
    token), then vLLM's sequential stage at temperature 0. Returns (base logits [k, V], tokens, confidences)."""
    sd = d.state_dict()
    c = d.c
    n = k if c.sample_from_anchor else k + 1
    block = torch.tensor([seq[r + 1]] + [c.mask_token_id] * (n - 1))
    first = 0 if c.sample_from_anchor else 1
    hidden = zlab_reference_forward(d, aux[: r + 1], block, r + 1, first=first, head=False)  # [k, H]
    base = F.linear(hidden, sd["lm_head.weight"])
    w1, w2 = sd["markov_head.markov_w1.weight"], sd["markov_head.markov_w2.weight"]
    if c.markov_topk is not None:  # _sample_sequential_topk: candidates once, from the base logits
        values, index = base.topk(c.markov_topk, dim=-1)
    prev, tokens, embeds = seq[r + 1], [], []
    for i in range(k):
        e = F.embedding(torch.tensor([prev]), w1)  # markov_embed(prev) [1, rank]
        embeds.append(e[0])
        if c.markov_topk is None:  # base_logits[:, i] + markov_bias(markov_embed)
            logits = base[i : i + 1] + F.linear(e, w2)
        else:  # apply_bias_gathered: -inf everywhere, corrected candidates scattered in
            logits = torch.full_like(base[i : i + 1], float("-inf"))
            corrected = values[i : i + 1].unsqueeze(-1).clone()
            corrected.baddbmm_(w2[index[i : i + 1]], e.unsqueeze(-1), beta=1.0, alpha=1.0)
            logits.scatter_(1, index[i : i + 1], corrected.squeeze(-1))
        tok = int(logits.argmax(-1))
        tok = tok + int(sd["d2t"][tok])  # map_draft_to_target
        tokens.append(tok)
        prev = tok
    x = torch.cat([hidden, torch.stack(embeds)], -1).float()  # DSparkConfidenceHead with_markov
    conf = torch.sigmoid(F.linear(x, sd["confidence_head.proj.weight"], sd["confidence_head.proj.bias"])[:, 0])
    return base, tokens, conf


# --- (a) forward, walk and confidence against the reference ---------------------------------------------------------


@pytest.mark.parametrize("topk,anchor", [(None, True), (5, True), (None, False)])
@torch.no_grad()
def test_dspark_step_equals_reference(topk, anchor):
    d = tiny_dspark(tiny_target(), noise=0.3, topk=topk, anchor=anchor)
    k = 4
    aux, ids = _inputs(k)
    rows = torch.tensor([0, 5, 12, 19])
    logits = d.draft_rows(aux, ids, rows, k)
    tokens = d.draft_tokens(aux, ids, rows, k)
    conf = d.confidence(aux, ids, rows, k)
    overruled = 0
    for i, r in enumerate(rows.tolist()):
        base, ref_tokens, ref_conf = reference_step(d, aux, ids.tolist(), r, k)
        torch.testing.assert_close(logits[i], base, atol=1e-5, rtol=1e-5)
        assert tokens[i].tolist() == ref_tokens
        torch.testing.assert_close(conf[i], ref_conf, atol=1e-5, rtol=1e-5)
        overruled += tokens[i].tolist() != base.argmax(-1).tolist()
    assert overruled, "the Markov bias never changed a draft: the walk is not exercised"


@torch.no_grad()
def test_dspark_topk_truncates():
    """With dspark_draft_topk the bias reaches the head's top-K only: a strong bias drafts outside the top-K densely,
    never with K."""
    d = tiny_dspark(tiny_target(), noise=0.3, markov=3.0)
    aux, ids = _inputs(4)
    rows = torch.arange(0, 20)
    base = d.draft_rows(aux, ids, rows, 4)
    dense = d.draft_tokens(aux, ids, rows, 4)
    d.c.markov_topk = 2
    top2 = d.draft_tokens(aux, ids, rows, 4)
    in_top2 = (base.topk(2, -1).indices == top2[..., None]).any(-1)
    assert in_top2.all()
    assert not (base.topk(2, -1).indices == dense[..., None]).any(-1).all()


# --- (b) parallel eval against a plain loop drafting with the reference ---------------------------------------------


@torch.no_grad()
def plain_decode_dspark(target, d, prompt: list[int], k: int, max_new: int) -> tuple[int, int]:
    """test_eval_dflash.plain_decode, the drafts from reference_step (the target recomputed over the whole sequence
    every step, nothing shared with eval)."""

    def draft(seq: list[int]) -> list[int]:
        hs = target(torch.tensor([seq[:-1]]), output_hidden_states=True).hidden_states
        aux = torch.cat([hs[i + 1][0] for i in IDS], -1)
        return reference_step(d, aux, seq, len(seq) - 2, k)[1]

    return plain_speculative_decode(target, prompt, k, max_new, draft)


@pytest.mark.parametrize("topk", [None, 3])
def test_dspark_parallel_eval_equals_plain_speculative_decoding(topk):
    target = tiny_target()
    d = tiny_dspark(target, markov=0.5, topk=topk)
    k, max_new = 4, 24
    res = evaluate_dflash(target, d, PROMPTS, [i + 1 for i in IDS], k=k, max_new=max_new)
    plain = [plain_decode_dspark(target, d, p, k, max_new) for p in PROMPTS]
    assert [(r.drafts, r.accepted) for r in res.prompts] == plain
    assert sum(a for _, a in plain) >= 4, plain  # the comparison is about something


# --- (c) the CLI ------------------------------------------------------------------------------------------------------


def _write_dspark(tmp_path):
    """A tiny Qwen3 target and a DSpark drafter over its layers 0..2 in DeepSpec's layout (target layers, mask token
    and block size at the top level, markov_head / confidence_head; embed_tokens and lm_head shared from the target)."""
    import dflash_fixtures as fx

    target = tiny_target()
    tdir = tmp_path / "target"
    target.save_pretrained(tdir)
    d = tiny_dspark(target, markov=0.5)
    c = d.c
    ts = {n: t.numpy().astype(np.float32) for n, t in d.state_dict().items() if n not in ("embed_tokens.weight", "lm_head.weight", "d2t")}
    cfg = fx.config_dspark(
        hidden_size=c.hidden_size,
        num_hidden_layers=c.num_layers,
        num_attention_heads=c.num_heads,
        num_key_value_heads=c.num_kv_heads,
        head_dim=c.head_dim,
        intermediate_size=c.intermediate_size,
        vocab_size=VOCAB,
        target_layer_ids=IDS,
        mask_token_id=c.mask_token_id,
        block_size=4,
        markov_rank=RANK,
    )
    ddir = fx.write(tmp_path / "draft", cfg, ts)
    prompts = write_prompts(tmp_path / "p.jsonl")
    return ddir, tdir, prompts


def test_cli_eval_dspark(tmp_path):
    from typer.testing import CliRunner

    from specbridge.cli.main import app

    ddir, tdir, prompts = _write_dspark(tmp_path)
    out = eval_cli(ddir, tdir, prompts)
    assert out["family"] == "dspark" and out["steps"] == 4 and out["draft_tokens"] == 5  # k = block_size
    assert out["markov_head"] == "dense" and out["confidence_head"] is True
    assert out["drafts"] > 0 and out["accepted"] > 0, out
    # vLLM 0.32.0 runs DSpark on Model Runner V2: the numbers as trained
    v2 = eval_cli(ddir, tdir, prompts, "--engine", "vllm==0.32.0")
    assert (v2["accepted"], v2["per_prompt"]) == (out["accepted"], out["per_prompt"])
    assert any("Model Runner V2" in n for n in v2["notes"]), v2["notes"]
    args = ["eval", str(ddir), "--target", str(tdir), "--prompts", str(prompts), "--json", "--engine", "vllm==0.32.0"]
    r = CliRunner().invoke(app, [*args, "--model-runner", "v1"])
    assert r.exit_code == 1 and "Model Runner V1 does not support: dspark" in r.output, r.output
