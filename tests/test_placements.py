"""One range type and one placement path for every drafter family: EAGLE-3's eras are FamilyRange rows of family
"eagle3", and `registry.placements` places an --engine spec for EAGLE-3 (`resolve` is its list) as for any family."""

from __future__ import annotations

import pytest

from specbridge.engines import registry, spec
from specbridge.engines.registry import (
    ALL,
    ENGINES,
    FAMILY_RANGES,
    NEWEST,
    PINNED,
    EngineSpecError,
    family_era,
    family_rows,
    placements,
    resolve,
)

SPECS = [
    "all",
    "sglang",
    "vllm",
    "trtllm",
    "sglang==0.5.11",
    "vllm==0.32",
    "vllm==0.20.1",
    "vllm==0.99.0",
    "sglang==0.5.11,vllm",
    "all,sglang",
]


def test_one_range_type():
    assert not hasattr(spec, "Era") and not hasattr(registry, "FamilyPlace") and not hasattr(registry, "family_places")
    for engine in ENGINES:
        assert ENGINES[engine] and all(type(r) is spec.FamilyRange and r.family == "eagle3" and r.name for r in ENGINES[engine])
        assert family_rows(engine, "eagle3") == list(ENGINES[engine])
        assert all(type(r) is spec.FamilyRange and r.family != "eagle3" for r in FAMILY_RANGES[engine])


def test_a_range_is_shown_by_its_name_else_by_its_family_and_span():
    era = ENGINES["vllm"][-1]
    assert family_era(era) == era.name
    dflash = family_rows("vllm", "dflash")
    assert family_era(dflash[-1]) == f"dflash {dflash[-1].first}+" and not dflash[-1].name
    closed = next(r for r in dflash if r.last)
    assert family_era(closed) == f"dflash {closed.first}–{closed.last}"


@pytest.mark.parametrize("specs", SPECS)
def test_resolve_is_eagle3s_placements(specs):
    places, skipped = placements(specs)
    assert places == resolve(specs) and not skipped
    assert all(p.row is p.era and p.first == ENGINES[p.era.engine][0].first for p in places)
    assert len({(id(p.era), p.version) for p in places}) == len(places)  # duplicates removed


def test_all_means_every_era_for_eagle3_and_every_range_for_a_family():
    eagle3, _ = placements("all")
    assert [p.era for p in eagle3] == [e for eras in ENGINES.values() for e in eras] and {p.how for p in eagle3} == {ALL}
    [bare] = placements("sglang")[0]
    assert bare.era is ENGINES["sglang"][-1] and bare.how == NEWEST
    dflash, _ = placements("vllm", "dflash", "DFlash")
    modelled = [r for r in family_rows("vllm", "dflash") if r.classes]
    assert [p.row for p in dflash] == modelled and {p.how for p in dflash} == {NEWEST}
    assert all(p.era is registry.era_at("vllm", p.version) for p in dflash)


def test_a_family_is_pinned_by_the_same_rules():
    [p] = placements("vllm==0.32.0", "dflash", "DFlash")[0]
    assert p.how == PINNED and p.era is resolve("vllm==0.32.0")[0].era and p.row.family == "dflash"
    for bad in ("vllm==0.8.4", "vllm==", "vllm>=0.31", "vllm==x"):
        with pytest.raises(EngineSpecError) as eagle3:
            resolve(bad)
        with pytest.raises(EngineSpecError) as dflash:
            placements(bad, "dflash", "DFlash")
        assert str(dflash.value) == str(eagle3.value), bad


def test_a_family_answers_a_repeated_release_once():
    once, _ = placements("vllm==0.32.0", "dflash", "DFlash")
    assert placements("vllm==0.32.0,vllm==0.32.0", "dflash", "DFlash")[0] == once
    every, _ = placements("all", "dflash", "DFlash")
    assert placements("all,vllm", "dflash", "DFlash")[0] == every
