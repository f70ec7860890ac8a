"""Offline acceptance of P-EAGLE drafters (EAGLE-3 plus mask_hidden, parallel drafting; model/peagle.py):
(a) the all-rows parallel eval counts exactly what a plain token-by-token speculative decode counts, where each verify
    step is one causal forward of the drafter over the verified pairs and k - 1 masked slots (vLLM's layout);
(b) the CLI measures a speculators-format P-EAGLE checkpoint, as trained and as vLLM 0.32.0 loads it."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from eval_reference import PROMPTS, plain_speculative_decode, write_prompts  # noqa: E402
from test_eval_eagle1 import VOCAB, H, tiny_target  # noqa: E402

from specbridge.eval.run import draft_chains, evaluate, peagle_chains, run_target_batch  # noqa: E402
from specbridge.model.drafter import DrafterConfig, Eagle3Drafter, KVCache  # noqa: E402

pytestmark = pytest.mark.ml  # the ml tier: torch (./setup.sh --ml)

torch.set_num_threads(1)

BOUNDARIES = [1, 2, 3]  # inputs of layers 1, 2 and of the final norm of the 3-layer target
PARD = VOCAB - 1


def tiny_peagle(target, seed: int = 1, noise: float = 0.05) -> tuple[Eagle3Drafter, torch.Tensor]:
    """An EAGLE-3 drafter that can guess (fc passes the target's last state on, v/o carry the prefix's states to the
    masked slots; the target's final norm and head read them) and a mask_hidden."""
    torch.manual_seed(seed)
    c = DrafterConfig(
        hidden_size=H,
        intermediate_size=96,
        num_heads=2,
        num_kv_heads=2,
        head_dim=32,
        vocab_size=VOCAB,
        draft_vocab_size=VOCAB,
        aux_layer_ids=BOUNDARIES,
        norm_before_residual=False,
    )
    d = Eagle3Drafter(c)
    with torch.no_grad():
        for name, p in d.named_parameters():
            if p.requires_grad or name == "embed_tokens.weight":
                p.copy_((1.0 if "norm" in name else 0.0) + noise * torch.randn_like(p))
        d.fc.weight[:, 2 * H :] += torch.eye(H)
        layer = d.layers[0]
        layer.self_attn.v_proj.weight[:, H:] += torch.eye(H)
        layer.self_attn.o_proj.weight += 2.0 * torch.eye(H)
        d.embed_tokens.weight.copy_(target.get_input_embeddings().weight)
        d.lm_head.weight.copy_(target.get_output_embeddings().weight)
        d.norm.weight.copy_(target.model.norm.weight)
    mask_hidden = 0.1 * torch.randn(3 * H, generator=torch.Generator().manual_seed(seed + 7))
    return d.eval(), mask_hidden


@torch.no_grad()
def _aux(target, seq):
    """The target's states at BOUNDARIES over seq (pre-hooks: the input of layer b, of the final norm for b = 3)."""
    store = {}
    mods = [*target.model.layers, target.model.norm]
    hooks = [
        mods[b].register_forward_pre_hook(
            lambda m, a, kw, b=b: store.__setitem__(b, (a[0] if a else kw["hidden_states"])[0]), with_kwargs=True
        )
        for b in BOUNDARIES
    ]
    try:
        target(torch.tensor([seq]))
    finally:
        for h in hooks:
            h.remove()
    return torch.cat([store[b] for b in BOUNDARIES], -1)


@torch.no_grad()
def plain_decode(target, d: Eagle3Drafter, mask_hidden, prompt: list[int], k: int, max_new: int) -> tuple[int, int]:
    """Each verify step: one causal pass of the drafter over the verified pairs (s[p+1], fc(aux h[p])) at positions p
    and k - 1 masked slots (PARD, fc(mask_hidden)) after them, the k drafts read at the last pair and the slots; the
    target verifies greedily; advance by accepted + 1. Nothing cached, nothing shared with eval's all-rows pass."""

    def draft(seq: list[int]) -> list[int]:
        n = len(seq) - 1
        hidden = torch.cat([d.fuse(_aux(target, seq[:-1])), d.fuse(mask_hidden[None]).expand(k - 1, -1)], 0)[None]
        ids = torch.tensor([seq[1:] + [PARD] * (k - 1)])
        logits, _ = d(ids, hidden, torch.arange(n + k - 1)[None], kv_cache=KVCache())
        return d.draft_to_target(logits[0, n - 1 :].argmax(-1)).tolist()

    return plain_speculative_decode(target, prompt, k, max_new, draft)


@pytest.mark.parametrize("k,seed", [(3, 1), (4, 3)])
def test_parallel_eval_equals_plain_speculative_decoding(k, seed):
    target = tiny_target()
    d, mask_hidden = tiny_peagle(target, seed=seed)
    max_new = 24
    res = evaluate(target, d, PROMPTS, BOUNDARIES, steps=k, max_new=max_new, parallel=(PARD, mask_hidden))
    plain = [plain_decode(target, d, mask_hidden, p, k, max_new) for p in PROMPTS]
    assert [(r.drafts, r.accepted) for r in res.prompts] == plain
    assert sum(a for _, a in plain) >= 4, plain
    assert res.summary.per_position[1] > 0  # a masked slot's draft accepted
    # slot 0 is EAGLE-3's first step; the masked slots are not the chain EAGLE-3 would draft from the same weights
    run = run_target_batch(target, PROMPTS[:1], 8, set(BOUNDARIES))[0]
    par, chain = peagle_chains(d, run, BOUNDARIES, k, False, PARD, mask_hidden), draft_chains(d, run, BOUNDARIES, k, False)
    assert torch.equal(par[:, 0], chain[:, 0]) and not torch.equal(par[:, 1:], chain[:, 1:])


# --- (b) the CLI -----------------------------------------------------------------------------------------------------


def test_cli_eval_peagle(tmp_path):
    import zoo_fixtures as z
    from conftest import run_cli, write_checkpoint

    target = tiny_target()
    tdir = tmp_path / "target"
    target.save_pretrained(tdir)
    d, mask_hidden = tiny_peagle(target)
    ts = {
        n: t.numpy().astype(np.float32)
        for n, t in d.state_dict().items()
        if n not in ("fc_input_scale", "t2d", "d2t", "embed_tokens.weight")
    }
    ts["mask_hidden"] = mask_hidden[None].numpy().astype(np.float32)
    dims = dict(vocab_size=VOCAB, draft_vocab_size=VOCAB, intermediate_size=96, num_key_value_heads=2)
    cfg = z.peagle_config(mask_token_id=PARD, eagle_aux_hidden_state_layer_ids=BOUNDARIES, draft_vocab_size=VOCAB)
    cfg["transformer_layer_config"] |= dims
    ddir = write_checkpoint(tmp_path / "peagle", cfg, ts)
    prompts = write_prompts(tmp_path / "p.jsonl")
    from typer.testing import CliRunner

    from specbridge.cli.main import app

    def ev(*extra):
        args = ["eval", str(ddir), "--target", str(tdir), "--prompts", str(prompts), "--max-new-tokens", "16", "--json", *extra]
        r = CliRunner().invoke(app, args)
        assert r.exit_code == 0, (r.exit_code, r.output, r.exception)
        return json.loads(r.stdout)

    out = ev()
    assert out["family"] == "peagle" and out["parallel_drafting"] and out["pard_token"] == PARD, out
    # no --steps: the speculators config's proposal_methods[0].speculative_tokens (4), what vLLM serves it with
    assert cfg["speculators_config"]["proposal_methods"][0]["speculative_tokens"] == 4 and out["steps"] == 4
    lib = evaluate(target, d, PROMPTS, BOUNDARIES, steps=4, max_new=16, parallel=(PARD, mask_hidden))
    assert (out["accepted"], out["drafts"]) == (lib.summary.accepted, lib.summary.drafts) and out["accepted"] > 0
    v = ev("--engine", "vllm==0.32.0")
    assert (v["accepted"], v["per_prompt"]) == (out["accepted"], out["per_prompt"]), v["notes"]
    # a config that does not say: 3, as for EAGLE-3
    plain_cfg = cfg | {"speculators_config": {**cfg["speculators_config"], "proposal_methods": [{"proposal_type": "greedy"}]}}
    three = write_checkpoint(tmp_path / "no-tokens", plain_cfg, ts)
    r = run_cli("eval", three, "--target", tdir, "--prompts", prompts, "--max-new-tokens", "16", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["steps"] == 3, r.stdout[-500:] + r.stderr[-500:]
    # no mask_hidden: vLLM raises at load (answered before the target is loaded), and as trained there is nothing to draft with
    bare = write_checkpoint(tmp_path / "bare", cfg, {n: t for n, t in ts.items() if n != "mask_hidden"})
    r = run_cli("eval", bare, "--target", tdir, "--prompts", prompts, "--engine", "vllm==0.32.0", "--json")
    assert r.returncode == 1 and "mask_hidden" in json.loads(r.stdout)["refused"], r.stdout
    r = run_cli("eval", bare, "--target", tdir, "--prompts", prompts, "--json")
    assert r.returncode == 1 and "no mask_hidden" in json.loads(r.stdout)["refused"], r.stdout
    r = run_cli("eval", ddir, "--target", tdir, "--prompts", prompts, "--topk", "2")
    assert r.returncode == 2 and "parallel" in r.stderr, r.stderr
