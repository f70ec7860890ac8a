"""`check` at header speed: the engine-independent analysis (vocab maps, embedding statistics, geometry)
runs once per checkpoint however many engine eras are checked, and the vocab-map rules computed with C-speed
passes say exactly what the element-by-element definition says."""

from __future__ import annotations

import random
import struct

import pytest
from conftest import SF_SGLANG, TINY_TARGET, mutate

from specbridge.checkpoint.target import open_target
from specbridge.engines.registry import resolve
from specbridge.layouts import embedding
from specbridge.rules import context
from specbridge.rules.check import check
from specbridge.view import open_view

V, VD = 512, 128  # the producer fixtures' target and draft vocab
VOCAB_CODES = ("V002", "V003", "V004", "V005", "V008")


def reference_vocab_findings(d2t: list[int], t2d: list[int], vd: int, v: int) -> list[tuple[str, str, str]]:
    """The vocab-map rules' definition, one element at a time (what the fast code must agree with)."""
    out = []
    if vd and len(d2t) != vd:
        out.append(("V002", "error", f"d2t has {len(d2t)} entries but the draft vocab (lm_head rows) is {vd}."))
    tgt = [i + o for i, o in enumerate(d2t)]
    if len(d2t) > 1 and all(o == i for i, o in enumerate(d2t)):
        out.append(("V008", "error", "d2t == arange: it holds absolute ids where offsets are expected, so target id = 2i for draft id i."))
    bad = [i for i, t in enumerate(tgt) if not 0 <= t < v]
    if bad:
        out.append(
            ("V003", "error", f"{len(bad)} d2t entries map outside the target vocab [0, {v}) (first: draft id {bad[0]} → {tgt[bad[0]]}).")
        )
    if len(set(tgt)) != len(tgt):
        out.append(
            ("V004", "error", f"d2t maps {len(tgt) - len(set(tgt))} draft ids onto target ids already taken: the map is not one-to-one.")
        )
    elif any(b <= a for a, b in zip(tgt, tgt[1:])):
        out.append(("V004", "warning", "d2t's target ids are not increasing; every producer writes them sorted ascending."))
    problems = []
    if len(t2d) != v:
        problems.append(f"length {len(t2d)} ≠ target vocab {v}")
    if sum(1 for x in t2d if x) != len(d2t):
        problems.append(f"{sum(1 for x in t2d if x)} entries set ≠ {len(d2t)} draft ids")
    miss = [t for t in tgt if 0 <= t < len(t2d) and not t2d[t]]
    if miss:
        problems.append(f"{len(miss)} ids selected by d2t are not set in t2d")
    if problems:
        out.append(("V005", "error", "t2d disagrees with d2t: " + "; ".join(problems) + "."))
    return out


def random_maps(rng: random.Random) -> tuple[list[int], list[int]]:
    """A valid sorted map, then zero to three corruptions of the kinds producers and hand edits make."""
    ids = sorted(rng.sample(range(V), VD))
    d2t = [t - i for i, t in enumerate(ids)]
    t2d = [0] * V
    for t in ids:
        t2d[t] = 1
    for _ in range(rng.randrange(4)):
        op = rng.randrange(8)
        if op == 0:
            d2t[rng.randrange(len(d2t))] += rng.choice([-1, 1, 7, 10**6, -(10**6), 2**62])
        elif op == 1 and len(d2t) > 1:
            i = rng.randrange(len(d2t) - 1)
            d2t[i], d2t[i + 1] = d2t[i + 1], d2t[i]
        elif op == 2:
            t2d[rng.randrange(len(t2d))] ^= 1
        elif op == 3:
            d2t = list(range(len(d2t)))
        elif op == 4:
            d2t = d2t[: rng.randrange(1, len(d2t))]
        elif op == 5:
            t2d = t2d[: rng.randrange(1, V)]
        elif op == 6:
            d2t = [rng.randrange(-5, V) for _ in d2t]
        else:
            d2t = [0] * len(d2t)
    return d2t, t2d


def with_maps(tmp_path, n: int, d2t: list[int], t2d: list[int]):
    def f(t):
        t["d2t"] = ("I64", [len(d2t)], struct.pack(f"<{len(d2t)}q", *d2t))
        t["t2d"] = ("BOOL", [len(t2d)], bytes(t2d))
        return t

    return mutate(SF_SGLANG, tmp_path / f"case{n}", tensors=f)


def test_fast_vocab_rules_agree_with_their_element_wise_definition(tmp_path):
    rng = random.Random(7)
    target = open_target(TINY_TARGET)
    seen = set()
    for n in range(120):
        d2t, t2d = random_maps(rng)
        res = check(open_view(with_maps(tmp_path, n, d2t, t2d)), "sglang==0.5.11", target=target)[0]
        got = [(f.code, f.severity, f.message) for f in res.findings if f.code in VOCAB_CODES]
        assert sorted(got) == sorted(reference_vocab_findings(d2t, t2d, VD, V)), (d2t, t2d)
        seen.update(code for code, _, _ in got)
    assert seen == set(VOCAB_CODES)  # the random corruptions reached every rule


def test_engine_independent_analysis_runs_once_for_every_era(tmp_path, monkeypatch):
    """`check --engine all` reads and counts each vocab map and samples the embedding once, not per era."""
    reads, samples = [], []
    real_int_array, real_sample_rows = context.int_array, embedding.sample_rows
    monkeypatch.setattr(context, "int_array", lambda t: reads.append(t.name) or real_int_array(t))
    monkeypatch.setattr(embedding, "sample_rows", lambda t, n: samples.append(t.name) or real_sample_rows(t, n))
    view = open_view(mutate(SF_SGLANG.parent / "export-hf", tmp_path / "hf"))  # has embed_tokens
    results = check(view, "all", target=open_target(TINY_TARGET))
    assert len(results) == len(list(resolve("all"))) > 5
    assert sorted(reads) == ["d2t", "t2d"] and samples == ["embed_tokens.weight"]


def test_shared_findings_are_reported_by_every_era(tmp_path):
    """Computed once, the geometry and vocab findings still appear in each era's result, in rule order."""
    d2t = list(range(VD))  # absolute ids: V008 on every engine
    t2d = [1] * VD + [0] * (V - VD)
    results = check(open_view(with_maps(tmp_path, 0, d2t, t2d)), "all")
    assert all([f.code for f in r.findings].count("V008") == 1 for r in results)


@pytest.mark.parametrize("dtype", ["I64", "I32"])
def test_d2t_offsets_near_the_int64_limits_do_not_overflow(tmp_path, dtype):
    big = 2**62 if dtype == "I64" else 2**30
    d2t = [0] * (VD - 1) + [big]
    fmt = "q" if dtype == "I64" else "i"

    def f(t):
        t["d2t"] = (dtype, [VD], struct.pack(f"<{VD}{fmt}", *d2t))
        return t

    res = check(open_view(mutate(SF_SGLANG, tmp_path / "big", tensors=f)), "vllm")[0]
    [v003] = [f for f in res.findings if f.code == "V003"]
    assert f"first: draft id {VD - 1} → {VD - 1 + big}" in v003.message
