"""The runs scripts/adopt_release.py records (engines/adopted.py) join their range's runs wherever the tables are read,
and a recorded run whose range is gone is an error, never dropped."""

from __future__ import annotations

import pytest

from specbridge.engines import adopted, registry
from specbridge.engines.spec import Run

RUN = Run(release="0.28.0", date="2026-12-05", test="tests/test_conformance_vllm_dflash.py", cases=19, agreed=19)


def _ranges():
    import importlib

    return importlib.import_module("specbridge.engines.vllm").FAMILY_RANGES


def test_a_recorded_run_joins_its_range_and_only_it(monkeypatch):
    rows = _ranges()
    row = next(r for r in rows if r.family == "dflash" and r.first == "0.28.0")
    monkeypatch.setattr(adopted, "ADOPTED", (adopted.Adopted(engine="vllm", family="dflash", first="0.28.0", run=RUN),))
    out = registry.with_adopted("vllm", rows)
    changed = [(a, b) for a, b in zip(rows, out) if a != b]
    assert len(changed) == 1 and changed[0][0] is row and changed[0][1].runs == (*row.runs, RUN)
    assert registry.with_adopted("sglang", rows) is rows  # another engine's record leaves these alone


def test_a_recorded_run_whose_range_is_gone_raises(monkeypatch):
    lost = adopted.Adopted(engine="vllm", family="dflash", first="0.28.5", run=RUN)
    monkeypatch.setattr(adopted, "ADOPTED", (lost,))
    with pytest.raises(LookupError, match="0.28.5"):
        registry.with_adopted("vllm", _ranges())


def test_every_recorded_run_has_its_range():
    """The ledger as committed: each row's range exists and the run lies inside it."""
    from specbridge.engines.spec import in_release_range

    for a in adopted.ADOPTED:
        row = next(r for r in registry.family_rows(a.engine, a.family) if r.first == a.first)
        assert in_release_range(a.run.release, row.first, row.last) and a.run in row.runs


def test_adopt_release_writes_one_run_per_matrix_and_range(tmp_path):
    """A matrix run in batches (MTP, one per num_speculative_tokens) is one Run row; a run the range already records is
    not written again; the ledger written is what engines/adopted.py holds."""
    import ast
    import shutil
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root / "scripts"))
    import adopt_release as ar

    ledger = tmp_path / "adopted.py"
    shutil.copy(adopted.__file__, ledger)
    mtp = next(r for r in registry.family_rows("vllm", "mtp") if r.first == "0.26.0")
    label, test = registry.family_era(mtp), "tests/test_conformance_vllm_mtp.py"
    eagle3 = next(e for e in registry.ENGINES["vllm"] if any(r.release == "0.29.0" for r in e.runs))
    records = [
        ar.Record("mtp", label, "0.28.5", test, 14, 14),
        ar.Record("mtp", label, "0.28.5", test, 5, 5),
        ar.Record("eagle3", eagle3.name, "0.29.0", "tests/test_conformance_vllm.py", 46, 46),  # already recorded
    ]
    ar.write_adopted("vllm", records, ledger=ledger, regenerate=False)
    written = [
        node for node in ast.walk(ast.parse(ledger.read_text())) if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Adopted"
    ]
    assert len(written) == len(adopted.ADOPTED) + 1
    last = {k.arg: ast.literal_eval(k.value) if k.arg != "run" else k.value for k in written[-1].keywords}
    run = {k.arg: ast.literal_eval(k.value) for k in last["run"].keywords}
    assert (last["family"], last["first"]) == ("mtp", "0.26.0")
    assert (run["release"], run["test"], run["cases"], run["agreed"]) == ("0.28.5", test, 19, 19)


def test_a_differing_family_matrix_diffs_the_files_its_rows_cite():
    """adopt_release shows what changed in the engine files a family's rows cite, from the family's last run before
    the release (the vLLM 0.31.0 MTP gate was in glm4_moe.py, which the 0.31.0 range's begins cites)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
    import adopt_release as ar

    files = ar.family_loader_files("vllm", "mtp")
    assert {"vllm/model_executor/models/glm4_moe.py", "vllm/model_executor/model_loader/default_loader.py"} <= set(files)
    assert all(f.startswith("vllm/") and f.endswith(".py") for f in files)
    assert ar.last_run("vllm", "mtp", "tests/test_conformance_vllm_mtp.py", "0.31.0") == "0.30.0"
    assert ar.family_loader_files("sglang", "dflash") and all(f.startswith("sglang/") for f in ar.family_loader_files("sglang", "dflash"))
