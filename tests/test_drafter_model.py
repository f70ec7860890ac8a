"""The EAGLE-3 drafter module: TTT unroll == cached chain drafting, layout names, round trip."""

import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("safetensors")

from specbridge.model.drafter import DrafterConfig, Eagle3Drafter, KVCache  # noqa: E402

pytestmark = pytest.mark.ml  # the ml tier: torch (./setup.sh --ml)

FIXTURE = Path(__file__).resolve().parent / "fixtures/producers/speculators-0.9.0/train-save"


def tiny_drafter(seed=0, vocab=512, draft_vocab=128, nkv=2, nh=4, hd=16) -> Eagle3Drafter:
    torch.manual_seed(seed)
    cfg = DrafterConfig(
        hidden_size=64,
        intermediate_size=128,
        num_heads=nh,
        num_kv_heads=nkv,
        head_dim=hd,
        vocab_size=vocab,
        draft_vocab_size=draft_vocab,
        aux_layer_ids=[1, 2, 3],
        rope_theta=10000.0,
    )
    model = Eagle3Drafter(cfg)
    used = torch.sort(torch.randperm(vocab)[:draft_vocab]).values
    t2d = torch.zeros(vocab, dtype=torch.bool)
    t2d[used] = True
    model.set_vocab_map(used - torch.arange(draft_vocab), t2d)
    with torch.no_grad():
        model.embed_tokens.weight.normal_()
        for p in model.parameters():  # non-trivial norms, so a mixed-up norm would show
            if p.dim() == 1:
                p.uniform_(0.5, 1.5)
    return model.eval()


@pytest.mark.parametrize("nkv", [4, 2])
def test_ttt_unroll_matches_cached_chain_drafting(nkv):
    """Row t of TTT step j must be exactly what inference computes when it drafts a chain
    from prefix 0..t with a KV cache: the mask / position / token-feeding semantics."""
    model = tiny_drafter(nkv=nkv)
    B, T = 2, 12
    gen = torch.Generator().manual_seed(1)
    input_ids = torch.randint(0, 512, (B, T), generator=gen)
    aux = torch.randn(B, T, model.cfg.aux_width, generator=gen)
    steps = 3
    with torch.no_grad():
        ttt_logits = model.ttt_forward(input_ids, aux, steps)
        for t in (0, 5, T - 1):
            cache = KVCache()
            pos = torch.arange(t + 1)[None].expand(B, -1)
            logits, hidden = model(input_ids[:, : t + 1], model.fuse(aux[:, : t + 1]), pos, kv_cache=cache)
            tok, h = model.draft_to_target(logits[:, -1:].argmax(-1)), hidden[:, -1:]
            torch.testing.assert_close(logits[:, -1], ttt_logits[0][:, t], rtol=1e-4, atol=1e-4)
            for j in range(1, steps):
                logits, h = model(tok, h, torch.full((B, 1), t + j), kv_cache=cache)
                torch.testing.assert_close(logits[:, 0], ttt_logits[j][:, t], rtol=1e-4, atol=1e-4)
                tok = model.draft_to_target(logits.argmax(-1))
            assert cache.length == t + steps
            cache.crop(t + 1)
            assert cache.length == t + 1


def test_teacher_token_ttt_matches_a_chain_fed_the_real_tokens():
    """teacher_tokens: row t of step j is a cached chain from prefix 0..t whose step-j input is
    the sequence's own next token (input_ids[t+j] = x[t+1+j]), not the drafter's argmax."""
    model = tiny_drafter()
    B, T, steps = 2, 10, 3
    gen = torch.Generator().manual_seed(2)
    input_ids = torch.randint(0, 512, (B, T), generator=gen)
    aux = torch.randn(B, T, model.cfg.aux_width, generator=gen)
    with torch.no_grad():
        teacher = model.ttt_forward(input_ids, aux, steps, teacher_tokens=True)
        own = model.ttt_forward(input_ids, aux, steps)
        torch.testing.assert_close(teacher[0], own[0])  # step 0 is the same forward
        assert not torch.allclose(teacher[1], own[1])  # an untrained drafter's argmax is not the real token
        for t in (0, 4, T - 3):
            cache = KVCache()
            logits, h = model(input_ids[:, : t + 1], model.fuse(aux[:, : t + 1]), torch.arange(t + 1)[None].expand(B, -1), kv_cache=cache)
            h = h[:, -1:]
            for j in range(1, steps):
                logits, h = model(input_ids[:, t + j : t + j + 1], h, torch.full((B, 1), t + j), kv_cache=cache)
                torch.testing.assert_close(logits[:, 0], teacher[j][:, t], rtol=1e-4, atol=1e-4)


def test_fc_input_scale_folds_into_the_saved_fc_weight():
    """Training's per-dimension input scale must vanish on save: a drafter loaded from the
    folded state (plain fc on raw aux states, as engines run it) computes the same drafts."""
    model = tiny_drafter()
    with torch.no_grad():
        model.fc_input_scale.copy_(torch.rand(model.cfg.aux_width) * 10 + 0.01)
    ids = torch.randint(0, 512, (2, 7))
    aux = torch.randn(2, 7, model.cfg.aux_width) * 50
    folded = model.folded_state_dict()
    assert "fc_input_scale" not in folded
    plain = tiny_drafter(seed=5)
    plain.load_state_dict({**folded, "fc_input_scale": torch.ones(model.cfg.aux_width)})
    with torch.no_grad():
        for a, b in zip(model.ttt_forward(ids, aux, 2), plain.ttt_forward(ids, aux, 2)):
            torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)
        assert not torch.allclose(model.fc.weight, plain.fc.weight)


def test_ttt_step0_is_plain_causal_forward():
    model = tiny_drafter()
    ids = torch.randint(0, 512, (1, 9))
    aux = torch.randn(1, 9, model.cfg.aux_width)
    with torch.no_grad():
        logits, _ = model(ids, model.fuse(aux), torch.arange(9)[None])
        torch.testing.assert_close(model.ttt_forward(ids, aux, 1)[0], logits, rtol=1e-5, atol=1e-5)


def test_norm_before_residual_changes_the_residual_path():
    a = tiny_drafter()
    b = tiny_drafter()
    b.cfg.norm_before_residual = False
    ids, aux = torch.randint(0, 512, (1, 5)), torch.randn(1, 5, a.cfg.aux_width) * 3
    with torch.no_grad():
        assert not torch.allclose(a.ttt_forward(ids, aux, 1)[0], b.ttt_forward(ids, aux, 1)[0])


def test_draft_to_target_uses_offsets():
    model = tiny_drafter()
    used = torch.nonzero(model.t2d, as_tuple=True)[0]
    ids = torch.arange(model.cfg.draft_vocab_size)
    assert torch.equal(model.draft_to_target(ids), used)


def test_saved_names_shapes_dtypes_match_speculators_fixture(tmp_path):
    from safetensors import safe_open

    from specbridge.train.save import load_drafter, save_drafter

    model = tiny_drafter(nh=2, nkv=2, hd=32)  # the fixture's geometry
    save_drafter(model, tmp_path, verifier_name_or_path="tiny", ttt_steps=3)
    with safe_open(str(FIXTURE / "model.safetensors"), "pt") as ref, safe_open(str(tmp_path / "model.safetensors"), "pt") as ours:
        ref_names = set(ref.keys()) - {"embed_tokens.weight"}
        assert set(ours.keys()) == ref_names
        for name in ref_names:
            r, o = ref.get_tensor(name), ours.get_tensor(name)
            assert o.dtype == r.dtype, name
            assert o.shape == r.shape, name
    cfg = json.loads((tmp_path / "config.json").read_text())
    ref_cfg = json.loads((FIXTURE / "config.json").read_text())
    assert set(cfg) == set(ref_cfg)
    assert set(cfg["transformer_layer_config"]) == set(ref_cfg["transformer_layer_config"])
    assert set(cfg["speculators_config"]["proposal_methods"][0]) == set(ref_cfg["speculators_config"]["proposal_methods"][0])
    assert cfg["eagle_aux_hidden_state_layer_ids"] == [1, 2, 3]
    assert cfg["draft_vocab_size"] == 128 and cfg["dtype"] == "bfloat16"
    # round trip through the reader eval uses (embeddings supplied by the "target")
    target = torch.nn.Module()
    target.get_input_embeddings = lambda: model.embed_tokens
    back = load_drafter(tmp_path, target_model=target)
    assert torch.equal(back.d2t, model.d2t) and torch.equal(back.t2d, model.t2d)
    ids, aux = torch.randint(0, 512, (1, 6)), torch.randn(1, 6, model.cfg.aux_width)
    with torch.no_grad():
        torch.testing.assert_close(back.ttt_forward(ids, aux, 2)[1], model.ttt_forward(ids, aux, 2)[1], rtol=0.1, atol=0.15)


def test_other_layouts_are_refused_with_a_pointer_to_convert(tmp_path):
    from specbridge.train.save import save_drafter

    with pytest.raises(ValueError, match="convert"):
        save_drafter(tiny_drafter(), tmp_path, layout="sglang", verifier_name_or_path="x", ttt_steps=3)


def test_save_embeddings_flag_adds_embed_tokens(tmp_path):
    from safetensors import safe_open

    from specbridge.train.save import save_drafter

    save_drafter(tiny_drafter(), tmp_path, verifier_name_or_path="x", ttt_steps=3, save_embeddings=True)
    with safe_open(str(tmp_path / "model.safetensors"), "pt") as f:
        emb = f.get_tensor("embed_tokens.weight")
    assert emb.shape == (512, 64) and emb.dtype == torch.bfloat16


def test_skip_fc_feeds_the_state_as_it_is():
    """skip_fc (an engine that skips the fusion) is the same network with fc replaced by the identity:
    with fc set to a projection P, ttt_forward(x @ P.T) without fc equals ttt_forward(x) with it."""
    model = tiny_drafter()
    gen = torch.Generator().manual_seed(3)
    ids = torch.randint(0, 512, (1, 9), generator=gen)
    aux = torch.randn(1, 9, model.cfg.aux_width, generator=gen)
    with torch.no_grad():
        fused = model.fuse(aux)
        with_fc = model.ttt_forward(ids, aux, 3)
        without = model.ttt_forward(ids, fused, 3, skip_fc=True)
    for a, b in zip(with_fc, without):
        assert torch.allclose(a, b, atol=1e-5)
