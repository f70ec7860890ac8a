"""Conformance runs recorded by `scripts/adopt_release.py`: a release adopted into the tables by running the real
engine's loader on every case of a conformance matrix through `specbridge verify`, with check agreeing.

The script appends one row per (engine, range, test) it ran, never edits one: the range is named by its engine, its
family and its `first` release (stable, unlike the display name), the run by the `Run` the range's own `runs` would
hold. engines/registry.py adds each row's run to its range when it hands out an engine's tables, so `check`, the
matrix page and the tests' run-row checks see it as they see a run written into the range by hand. A row whose range
is gone (renamed, split) is an error at load time, never dropped."""

from __future__ import annotations

from ..record import record
from .spec import Run


@record
class Adopted:
    engine: str
    family: str  # "eagle3" for an EAGLE-3 era, else the FamilyRange's family
    first: str  # the era's or range's first release
    run: Run


ADOPTED: tuple[Adopted, ...] = (
    # rows appended by scripts/adopt_release.py --write, oldest first
    Adopted(
        engine="vllm",
        family="dflash",
        first="0.28.0",
        run=Run(release="0.28.0", date="2026-12-05", test="tests/test_conformance_vllm_dflash.py", cases=19, agreed=19),
    ),
    Adopted(
        engine="vllm",
        family="eagle",
        first="0.27.0",
        run=Run(release="0.28.0", date="2026-12-05", test="tests/test_conformance_vllm_eagle1.py", cases=10, agreed=10),
    ),
    Adopted(
        engine="vllm",
        family="medusa",
        first="0.25.0",
        run=Run(release="0.28.0", date="2026-12-05", test="tests/test_conformance_vllm_medusa.py", cases=11, agreed=9),
    ),
    Adopted(
        engine="vllm",
        family="mtp",
        first="0.26.0",
        run=Run(release="0.28.0", date="2026-12-05", test="tests/test_conformance_vllm_mtp.py", cases=21, agreed=21),
    ),
    Adopted(
        engine="vllm",
        family="dflash",
        first="0.28.0",
        run=Run(release="0.30.0", date="2026-12-05", test="tests/test_conformance_vllm_dflash.py", cases=19, agreed=19),
    ),
    Adopted(
        engine="vllm",
        family="eagle",
        first="0.29.0",
        run=Run(release="0.30.0", date="2026-12-05", test="tests/test_conformance_vllm_eagle1.py", cases=10, agreed=10),
    ),
    Adopted(
        engine="vllm",
        family="medusa",
        first="0.25.0",
        run=Run(release="0.30.0", date="2026-12-05", test="tests/test_conformance_vllm_medusa.py", cases=11, agreed=9),
    ),
    Adopted(
        engine="vllm",
        family="mtp",
        first="0.26.0",
        run=Run(release="0.30.0", date="2026-12-05", test="tests/test_conformance_vllm_mtp.py", cases=21, agreed=21),
    ),
    Adopted(
        engine="vllm",
        family="dflash",
        first="0.31.0",
        run=Run(release="0.31.0", date="2026-12-05", test="tests/test_conformance_vllm_dflash.py", cases=19, agreed=19),
    ),
    Adopted(
        engine="vllm",
        family="eagle",
        first="0.29.0",
        run=Run(release="0.31.0", date="2026-12-05", test="tests/test_conformance_vllm_eagle1.py", cases=10, agreed=10),
    ),
    Adopted(
        engine="vllm",
        family="medusa",
        first="0.25.0",
        run=Run(release="0.31.0", date="2026-12-05", test="tests/test_conformance_vllm_medusa.py", cases=11, agreed=9),
    ),
    Adopted(
        engine="vllm",
        family="mtp",
        first="0.31.0",
        run=Run(release="0.31.0", date="2026-12-05", test="tests/test_conformance_vllm_mtp.py", cases=21, agreed=21),
    ),
    Adopted(
        engine="sglang",
        family="eagle3",
        first="0.5.17",
        run=Run(release="0.5.17", date="2026-12-05", test="tests/test_conformance_sglang.py", cases=30, agreed=30),
    ),
    Adopted(
        engine="sglang",
        family="eagle",
        first="0.5.11",
        run=Run(release="0.5.17", date="2026-12-05", test="tests/test_conformance_sglang_eagle1.py", cases=9, agreed=9),
    ),
    Adopted(
        engine="sglang",
        family="eagle3",
        first="0.5.17",
        run=Run(release="0.5.18", date="2026-12-05", test="tests/test_conformance_sglang.py", cases=30, agreed=30),
    ),
    Adopted(
        engine="sglang",
        family="eagle",
        first="0.5.11",
        run=Run(release="0.5.18", date="2026-12-05", test="tests/test_conformance_sglang_eagle1.py", cases=9, agreed=9),
    ),
    Adopted(
        engine="sglang",
        family="dflash",
        first="0.5.11",
        run=Run(release="0.5.17", date="2026-12-05", test="tests/test_conformance_sglang_dflash.py", cases=20, agreed=20),
    ),
    Adopted(
        engine="sglang",
        family="dspark",
        first="0.5.17",
        run=Run(release="0.5.17", date="2026-12-05", test="tests/test_conformance_sglang_dflash.py", cases=14, agreed=14),
    ),
    Adopted(
        engine="sglang",
        family="dflash",
        first="0.5.18",
        run=Run(release="0.5.18", date="2026-12-05", test="tests/test_conformance_sglang_dflash.py", cases=20, agreed=20),
    ),
    Adopted(
        engine="sglang",
        family="dspark",
        first="0.5.18",
        run=Run(release="0.5.18", date="2026-12-05", test="tests/test_conformance_sglang_dflash.py", cases=14, agreed=14),
    ),
)
