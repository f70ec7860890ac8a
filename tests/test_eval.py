"""eval: the parallel acceptance computation equals, exactly, a plain greedy speculative-decoding
loop (chain and tree) on 20+ prompts; and the engine view predicts the story's 1.00."""

from __future__ import annotations

import copy
import json
import random

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from conftest import run_cli  # noqa: E402
from test_train import make_counting_target, tiny_args  # noqa: E402

from specbridge.eval.load import build_drafter  # noqa: E402
from specbridge.eval.run import evaluate  # noqa: E402
from specbridge.model.drafter import KVCache  # noqa: E402
from specbridge.view import open_view  # noqa: E402

pytestmark = pytest.mark.ml  # the ml tier: torch (./setup.sh --ml)

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    """A tiny counting target with a bit of noise, and a briefly trained drafter (partial acceptance)."""
    from transformers import AutoModelForCausalLM

    from specbridge.train.trainer import train

    root = tmp_path_factory.mktemp("eval")
    tgt = root / "target"
    model = counting_target(tgt, seed=3)
    with torch.no_grad():  # some rows break the counting pattern, so drafts are sometimes wrong
        g = torch.Generator().manual_seed(5)
        rows = torch.randperm(512, generator=g)[:150]
        model.lm_head.weight[rows] = torch.randn(150, 64, generator=g) * 3
    model.save_pretrained(tgt)
    out = root / "drafter"
    # aux layers [2, 4, 5] = every engine's default for an 8-layer target, so engine views differ only
    # where the engines really differ (decoder names), not by aux-layer numbering
    train(tiny_args(tgt, out, steps=40, aux_layers=[2, 4, 5]), log=lambda *a: None)
    target = AutoModelForCausalLM.from_pretrained(tgt, dtype=torch.float32).eval()
    rng = random.Random(11)
    prompts = [[rng.randrange(3, 500) for _ in range(rng.randrange(3, 9))] for _ in range(22)]
    return target, tgt, out, prompts


def counting_target(path, seed):
    """test_train's counting target with 8 layers (engines' default aux layers [2, 4, 5] are distinct)."""
    return make_counting_target(path, seed=seed, num_layers=8)


@torch.no_grad()
def _states(target, seq, boundaries):
    store = {}
    layers = target.model.layers

    def hook(b):
        def f(m, args, kwargs):
            store[b] = (args[0] if args else kwargs["hidden_states"])[0].detach()

        return f

    hs = [(layers[b] if b < len(layers) else target.model.norm).register_forward_pre_hook(hook(b), with_kwargs=True) for b in boundaries]
    try:
        logits = target(torch.tensor([seq])).logits[0]
    finally:
        for h in hs:
            h.remove()
    return torch.cat([store[b] for b in boundaries], -1), logits.argmax(-1).tolist()


@torch.no_grad()
def _prefix(drafter, seq, aux):
    """Drafter step 0 over rows 0..P with the target's states (what engines do after verification)."""
    P = len(seq) - 2
    cache = KVCache()
    logits, hid = drafter(torch.tensor([seq[1 : P + 2]]), drafter.fuse(aux[None, : P + 1]), torch.arange(P + 1)[None], kv_cache=cache)
    return cache, logits[0, -1], hid[0, -1], P


@torch.no_grad()
def plain_chain(target, drafter, prompt, k, max_new, boundaries):
    _, out = _states(target, prompt, boundaries)
    seq = prompt + [out[-1]]
    i, drafts, accepted, per_pos = 1, 0, 0, [0] * k
    while i < max_new:
        aux, _ = _states(target, seq, boundaries)
        cache, lg, h, P = _prefix(drafter, seq, aux)
        chain = [int(drafter.draft_to_target(lg.argmax()))]
        for j in range(1, k):
            lg2, h2 = drafter(torch.tensor([[chain[-1]]]), h[None, None], torch.tensor([[P + j]]), kv_cache=cache)
            chain.append(int(drafter.draft_to_target(lg2[0, -1].argmax())))
            h = h2[0, -1]
        _, verify = _states(target, seq + chain, boundaries)
        a = 0
        while a < k and chain[a] == verify[len(seq) - 1 + a]:
            per_pos[a] += 1
            a += 1
        seq = seq + chain[:a] + [verify[len(seq) - 1 + a]]
        drafts, accepted, i = drafts + 1, accepted + a, i + a + 1
    return drafts, accepted, per_pos


@torch.no_grad()
def plain_tree(target, drafter, prompt, steps, topk, budget, max_new, boundaries):
    _, out = _states(target, prompt, boundaries)
    seq = prompt + [out[-1]]
    i, drafts, accepted = 1, 0, 0
    while i < max_new:
        aux, _ = _states(target, seq, boundaries)
        cache, lg, h, P = _prefix(drafter, seq, aux)
        lp = torch.log_softmax(lg.float(), -1).topk(topk)
        frontier = [(float(s), [int(t)], h, cache) for s, t in zip(lp.values, lp.indices)]
        nodes = [(s, p) for s, p, _, _ in frontier]
        for step in range(1, steps):
            cand = []
            for score, path, hh, c in frontier:
                c2 = copy.deepcopy(c)
                tok = drafter.draft_to_target(torch.tensor([path[-1]]))
                lg2, h2 = drafter(tok[None], hh[None, None], torch.tensor([[P + step]]), kv_cache=c2)
                l2 = torch.log_softmax(lg2[0, -1].float(), -1).topk(topk)
                cand += [(score + float(s), path + [int(t)], h2[0, -1], c2) for s, t in zip(l2.values, l2.indices)]
            cand.sort(key=lambda x: -x[0])
            nodes += [(s, p) for s, p, _, _ in cand]
            frontier = cand[:topk]
        nodes.sort(key=lambda x: -x[0])
        best = 0
        for _, p in nodes[: budget - 1]:
            toks = drafter.draft_to_target(torch.tensor(p)).tolist()
            _, verify = _states(target, seq + toks, boundaries)
            a = 0
            while a < len(toks) and toks[a] == verify[len(seq) - 1 + a]:
                a += 1
            best = max(best, a)
        # greedy: accepted tokens are the target's own, plus the bonus
        cont = seq[:]
        for _ in range(best + 1):
            _, vv = _states(target, cont, boundaries)
            cont.append(vv[-1])
        seq = cont
        drafts, accepted, i = drafts + 1, accepted + best, i + best + 1
    return drafts, accepted


def test_chain_equals_plain_loop(setup):
    target, _, out, prompts = setup
    built = build_drafter(open_view(out), target, 8)
    k, max_new = 3, 20
    res = evaluate(target, built.model, prompts, built.boundaries, steps=k, max_new=max_new)
    total_acc = 0
    for p, r in zip(prompts, res.prompts):
        drafts, accepted, per_pos = plain_chain(target, built.model, p, k, max_new, built.boundaries)
        assert (r.drafts, r.accepted, r.accepted_per_pos) == (drafts, accepted, per_pos)
        total_acc += accepted
    assert len(prompts) >= 20
    assert 0 < total_acc < res.summary.draft_tokens  # partial acceptance: the test is not trivial
    assert 1.0 < res.summary.mean_accept_length < k + 1


def test_tree_equals_plain_loop(setup):
    target, _, out, prompts = setup
    built = build_drafter(open_view(out), target, 8)
    steps, topk, budget, max_new = 3, 2, 5, 12
    res = evaluate(target, built.model, prompts, built.boundaries, steps=steps, topk=topk, draft_tokens=budget, max_new=max_new)
    chain = evaluate(target, built.model, prompts, built.boundaries, steps=steps, max_new=max_new)
    for p, r in zip(prompts, res.prompts):
        assert (r.drafts, r.accepted) == plain_tree(target, built.model, p, steps, topk, budget, max_new, built.boundaries)
    # a tree of topk 1 is the chain; a wider tree accepts at least as much overall
    one = evaluate(target, built.model, prompts, built.boundaries, steps=steps, topk=1, max_new=max_new)
    assert one.summary.mean_accept_length == chain.summary.mean_accept_length


def test_engine_view_story(setup, tmp_path):
    """The trained drafter in speculators layout: no SGLang release dispatches its config, so eval refuses it as
    check does (L005, exit 1); in the story's layout (convert --to vllm: dispatched) SGLang 0.5.11 skips layers.0.*
    and predicts ≈ 1.00, 0.5.23 loads it; vLLM predicts the trained value; after convert --to sglang, 0.5.11
    predicts what 0.5.23 does."""
    target, tgt, out, prompts = setup
    pf = _prompt_file(tmp_path, prompts)

    def eval_json(drafter, *engine):
        r = run_cli("eval", drafter, "--target", tgt, *engine, "--prompts", pf, "--max-new-tokens", "16", "--json", timeout=600)
        return r.returncode, json.loads(r.stdout)

    for eng in ("sglang==0.5.11", "sglang==0.5.23"):
        rc, refused = eval_json(out, "--engine", eng)
        checked = run_cli("check", out, "--engine", eng, "--json")
        assert checked.returncode == 1 and "L005" in [f["code"] for f in json.loads(checked.stdout)["findings"]]
        assert rc == 1 and refused["ok"] is False and refused["mean_accept_length"] is None
        assert "(L005)" in refused["refused"] and "L005" in [f["code"] for f in refused["findings"]]
    _, trained = eval_json(out)
    assert trained["mean_accept_length"] > 1.3
    rc, vllm = eval_json(out, "--engine", "vllm")
    assert rc == 0 and vllm["mean_accept_length"] == pytest.approx(trained["mean_accept_length"], abs=1e-9)
    story = tmp_path / "story-layout"
    assert run_cli("convert", out, "--to", "vllm", "-o", story).returncode == 0
    rc, dropped = eval_json(story, "--engine", "sglang==0.5.11")
    assert rc == 0 and dropped["mean_accept_length"] < 1.05 and "L002" in [f["code"] for f in dropped["findings"]]
    # SGLang loads the decoder from 0.5.12 on, but takes the residual before hidden_norm whatever the
    # config says; this drafter was trained with norm_before_residual true (speculators' default)
    rc, s23 = eval_json(story, "--engine", "sglang==0.5.23")
    assert rc == 0 and any("norm_before_residual" in n for n in s23["notes"])
    assert 1.05 < s23["mean_accept_length"] != pytest.approx(trained["mean_accept_length"], abs=1e-3)
    conv = tmp_path / "sgl"
    assert run_cli("convert", out, "--to", "sglang", "-o", conv).returncode == 0
    _, fixed = eval_json(conv, "--engine", "sglang==0.5.11")
    assert fixed["mean_accept_length"] == pytest.approx(s23["mean_accept_length"], abs=1e-9)


def _prompt_file(tmp_path, prompts):
    f = tmp_path / "prompts.txt"
    f.write_text("\n".join(" ".join(map(str, p)) for p in prompts) + "\n")
    return f


def test_bf16_on_cpu_and_the_fail_under_gate(setup, tmp_path):
    """--dtype bfloat16 runs target and drafter in bf16 (on CPU here); --fail-under turns the accept
    length into a CI verdict; the JSON says how it was run and stays strict JSON."""
    target, tgt, out, prompts = setup
    pf = _prompt_file(tmp_path, prompts[:8])

    def eval_json(*extra):
        r = run_cli("eval", out, "--target", tgt, "--prompts", pf, "--max-new-tokens", "16", "--json", *extra, timeout=600)
        return r.returncode, json.loads(r.stdout)

    _, f32 = eval_json()
    rc, bf16 = eval_json("--dtype", "bfloat16", "--device", "auto", "--fail-under", "1.0")
    assert rc == 0 and bf16["ok"] is True and bf16["dtype"] == "bfloat16" and bf16["device"] == "cpu"
    assert bf16["schema"].startswith("specbridge.eval/") and 1.0 <= bf16["mean_accept_length"] <= 4.0
    # bf16 rounding may move a greedy near-tie of the target, so counts may differ a little, not wholesale
    assert abs(bf16["mean_accept_length"] - f32["mean_accept_length"]) < 0.25
    rc, obj = eval_json("--fail-under", str(f32["mean_accept_length"] + 0.5))
    assert rc == 1 and obj["ok"] is False and obj["fail_under"] == pytest.approx(f32["mean_accept_length"] + 0.5)


def test_target_resolves_as_in_check(setup, tmp_path):
    """Issue #23: --target resolves the same in eval as in check (cli/targets.py): the model's config.json
    measures exactly what its directory does; what check refuses as a target, eval refuses with the same
    line, before loading anything."""
    target, tgt, out, prompts = setup
    pf = _prompt_file(tmp_path, prompts[:3])
    runs = {}
    for spec in (tgt, tgt / "config.json"):
        r = run_cli("eval", out, "--target", spec, "--prompts", pf, "--max-new-tokens", "8", "--json", timeout=600)
        assert r.returncode == 0, r.stderr[-500:]
        runs[spec] = {k: v for k, v in json.loads(r.stdout).items() if k != "seconds"}
    assert runs[tgt] == runs[tgt / "config.json"] and runs[tgt]["num_prompts"] == 3
    (tmp_path / "empty").mkdir()
    for bad in (out, tmp_path / "empty", pf):  # a drafter, a directory without config.json, a text file
        c = run_cli("check", out, "--target", bad, "--engine", "vllm")
        e = run_cli("eval", out, "--target", bad, "--prompts", pf)
        assert c.returncode == e.returncode == 2 and c.stderr == e.stderr, (bad, c.stderr, e.stderr)
