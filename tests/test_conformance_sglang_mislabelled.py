"""Mislabelled drafters on SGLang's own loader (tests/mislabel_fixtures.py): the class SGLang builds for
architectures[0] (or, for a name it has no class for, the fallback check simulates too) and what its load_weights does
with the other family's tensors, against `check`'s prediction for the family the name says (rule L017). One harness
process per release over every case (src/specbridge/conformance/sglang_loader.py), compared as
tests/test_conformance_sglang.py compares EAGLE-3 drafters. Skipped per release when it is not installed."""

from __future__ import annotations

from pathlib import Path

import mislabel_fixtures as mf
import pytest
import zoo_fixtures as z
from test_conformance_sglang import _env_ready, differences, harness, observed, predicted
from test_conformance_vllm_mislabelled import agrees

from specbridge.rules.check import check
from specbridge.view import open_view

pytestmark = [pytest.mark.engine, pytest.mark.full_conformance]

RELEASES = ("0.5.11", "0.5.23")
CASES = list(mf.cases())
_REAL: dict[str, dict] = {}


@pytest.fixture(scope="session")
def mislabelled(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("mislabelled-sglang")
    return {name: z.write(root / name, cfg, ts) for name, (cfg, ts) in mf.cases().items()}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("release", RELEASES)
def test_check_matches_sglang_on_a_mislabelled_drafter(release, case, mislabelled):
    why = _env_ready(release)
    if why:
        pytest.skip(why)
    if release not in _REAL:
        _REAL[release] = harness(release, mislabelled)
    got = _REAL[release][case]
    assert not got.get("harness_failed"), got["errors"]
    view = open_view(mislabelled[case])
    (res,) = check(view, f"sglang=={release}", family=view.family)
    assert "L017" in {f.code for f in res.findings}
    assert got["class"] == res.report.cls.name, (got["class"], res.report.cls.name)
    diff = differences(predicted(res.report), observed(got))
    assert not diff, f"sglang {release}, {case}:\n  " + "\n  ".join(diff)
    for raised in got["errors"][:1]:  # what SGLang raised first is among what check says it raises
        assert agrees(raised, res.report.errors), f"sglang {release}: {raised!r}; check: {res.report.errors}"
