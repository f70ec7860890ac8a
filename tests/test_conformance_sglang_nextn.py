"""SGLang's NEXTN loader, run: for each installed SGLang release, the NextN draft SGLang builds from a tiny target
(--speculative-algorithm NEXTN without a draft path: the target's config through ModelConfig(is_draft_model=True),
then the draft class's load_weights over ALL the target's tensors), for a GLM-4.5-style target (Glm4MoeForCausalLMNextN,
from 0.4.9.post6) and a DeepSeek-V3-style one (DeepseekV3ForCausalLMNextN), each complete and mutated.

What SGLang did is stored in tests/fixtures/conformance-nextn/observed.json (per release, per case: the parameters
loaded and left at init, the checkpoint names skipped, the names it warned about, what it raised); this test reruns
the harness (src/specbridge/conformance/sglang_loader.py --nextn) and asserts the same outcome, so a change in the
harness or a re-unpacked wheel that changes SGLang's behaviour fails here. Regenerate after a deliberate change with
`python tests/test_conformance_sglang_nextn.py` (writes the JSON for every release installed). Skipped per release
when the SGLang conformance environment is absent."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import mtp_fixtures as nx
import pytest
from test_conformance_sglang import ENV, _env_ready, harness
from test_conformance_sglang import _pv as parse_version

from specbridge.conformance.verify import nextn_param_differences

OBSERVED = Path(__file__).parent / "fixtures" / "conformance-nextn" / "observed.json"
GLM_FROM = "0.4.9.post6"  # glm4_moe_nextn.py and the Glm4MoeForCausalLM -> …NextN rename first appear here


def _drop_nnpl(c: dict) -> dict:
    return {k: v for k, v in c.items() if k != "num_nextn_predict_layers"}


def _without(c: dict, part: str) -> dict:
    """The whole target with the NextN layer's tensors containing `part` left out."""
    return nx.without(c, lambda k: part in k)


# cases recorded after the first matrix (2026-12-01): stored on the releases run since (the newest at least); the engine
# test skips a release whose stored outcome lacks them until `python tests/test_conformance_sglang_nextn.py` records it
LATER = ("no-routed-experts", "no-attention", "no-kv-a")


def _family_cases(fam: str, config) -> dict:
    """name -> (config, tensors) for one target family."""
    c = config()
    n = c["num_hidden_layers"]
    extra = {f"model.layers.{n}.foo.weight": nx.np.ones((4, nx.H), nx.np.float32)}
    return {
        # the NextN layer without its routed experts (GLM-5's served layers) / without its attention
        f"{fam}-no-routed-experts": (c, lambda: _without(c, ".mlp.experts.")),
        f"{fam}-no-attention": (c, lambda: _without(c, ".self_attn.")),
        f"{fam}-complete": (c, lambda: nx.target_tensors(c)),
        f"{fam}-head-absent": (c, lambda: nx.target_tensors(c, mtp=False)),
        f"{fam}-nnpl-2": (config(mtp=2), lambda: nx.target_tensors(c)),
        f"{fam}-renamed-mtp-prefix": (c, lambda: nx.target_tensors(c, mtp_prefix="mtp.layers.0.")),
        f"{fam}-unknown-tensor": (c, lambda: nx.target_tensors(c) | extra),
        f"{fam}-no-nnpl-key": (_drop_nnpl(c), lambda: nx.target_tensors(c)),
    }


CASES = _family_cases("glm", nx.glm_config) | _family_cases("deepseek", nx.deepseek_config)
# DeepSeek's MLA: q_a_proj without kv_a_proj_with_mqa, the two halves of fused_qkv_a_proj_with_mqa (written only once
# both were read)
_DS = nx.deepseek_config()
CASES["deepseek-no-kv-a"] = (_DS, lambda: _without(_DS, ".kv_a_proj_with_mqa."))


def cases_for(version: str) -> list[str]:
    """GLM's NextN class exists from GLM_FROM; the DeepSeek one in every release."""
    glm = parse_version(version) >= parse_version(GLM_FROM)
    return [c for c in CASES if glm or not c.startswith("glm-")]


def observed(r: dict) -> dict:
    """The outcome of one case, as stored: class, parameters loaded / partly / left at init, names skipped, warnings
    raised while loading, errors."""
    return {
        "class": r.get("class"),
        "loaded": r.get("filled", []),
        "partial": r.get("partial", []),
        "left_at_init": r.get("unfilled", []),
        "skipped": r.get("skipped", []),
        "warnings": r.get("warnings", []),
        "errors": r.get("errors", []),
    }


def _stored() -> dict:
    return json.loads(OBSERVED.read_text()) if OBSERVED.is_file() else {}


def _installed() -> list[str]:
    wheels = ENV / "wheels"
    return sorted((p.name for p in wheels.iterdir() if (p / ".specbridge-ok").is_file()), key=parse_version) if wheels.is_dir() else []


def nextn_releases() -> list[str]:
    """The stored releases this environment holds; with SPECBRIDGE_CONFORMANCE=per-era (as CI), the newest of each era,
    an era being a run of consecutive stored releases with the same outcome on every case (as family_releases picks
    the newest per modelled range). None installed: every stored release (their tests skip)."""
    stored = _stored()
    order = sorted(stored, key=parse_version)
    have = set(_installed())
    if not have & set(order):
        return order
    if os.environ.get("SPECBRIDGE_CONFORMANCE") != "per-era":
        return [v for v in order if v in have]
    eras: list[list[str]] = []
    for v in order:
        if eras and stored[eras[-1][-1]] == stored[v]:
            eras[-1].append(v)
        else:
            eras.append([v])
    return [got[-1] for era in eras if (got := [v for v in era if v in have])]


def _write(root: Path, names: list[str]) -> dict[str, Path]:
    return {n: nx.write_target(root / n, CASES[n][0], CASES[n][1]()) for n in names}


def run_harness(version: str, paths: dict[str, Path]) -> dict[str, dict]:
    """One harness process per release over the given targets (SGLang's import is the slow part)."""
    return harness(version, paths, "--nextn")


_RESULTS: dict[str, dict] = {}
RELEASES = nextn_releases()


@pytest.fixture(scope="session")
def nextn_root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("sglang-nextn")


def real(version: str, root: Path) -> dict[str, dict]:
    if version not in _RESULTS:
        _run_installed(root)  # every installed release at once, two harness processes side by side
    if version not in _RESULTS:
        _RESULTS[version] = run_harness(version, _write(root / version, cases_for(version)))
    return _RESULTS[version]


def _run_installed(root: Path) -> None:
    """The harness for every installed release of RELEASES, two processes at a time (SGLang's import is most of each:
    on two cores the same runs take about half the wall time)."""
    from concurrent.futures import ThreadPoolExecutor

    todo = [v for v in RELEASES if v in set(_installed()) and v not in _RESULTS]

    def one(v: str) -> None:
        _RESULTS[v] = run_harness(v, _write(root / v, cases_for(v)))

    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(one, todo))


@pytest.mark.engine
@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("version", RELEASES)
def test_sglang_nextn_loader_matches_stored(version, case, nextn_root):
    if case not in cases_for(version):
        pytest.skip(f"SGLang {version} has no {case.split('-')[0]} NextN class (GLM's from {GLM_FROM})")
    if case not in _stored().get(version, {}):
        pytest.skip(f"{case} is not recorded for SGLang {version} yet (python tests/test_conformance_sglang_nextn.py records it)")
    why = _env_ready(version)
    if why:
        pytest.skip(why)
    r = real(version, nextn_root)[case]
    assert not r.get("harness_failed"), r["errors"]
    assert r["sglang_version"] == version
    assert observed(r) == _stored()[version][case], f"sglang {version}, {case}: SGLang's NextN loader no longer does what is stored"


def test_stored_matrix_is_complete():
    """Every stored release holds every case its classes allow, and the outcomes name the NextN classes."""
    stored = _stored()
    assert len(stored) >= 15, sorted(stored)
    later = {c for c in CASES if c.split("-", 1)[1] in LATER}
    for v, by_case in stored.items():
        assert set(cases_for(v)) - later <= set(by_case) <= set(cases_for(v)), v
        for case, o in by_case.items():
            want = "Glm4MoeForCausalLMNextN" if case.startswith("glm-") else "DeepseekV3ForCausalLMNextN"
            assert o["class"] == want, (v, case, o["class"])
    assert later <= set(stored[max(stored, key=parse_version)]), "the newest stored release holds every case"


def _regenerate() -> None:
    """Run every installed release over its cases and write OBSERVED, with the seconds each release took."""
    import tempfile

    out, seconds = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for v in _installed():
            t0 = time.monotonic()
            res = run_harness(v, _write(Path(tmp) / v, cases_for(v)))
            seconds[v] = round(time.monotonic() - t0, 1)
            out[v] = {c: observed(r) for c, r in res.items()}
            print(v, seconds[v], "s", {c: (o["errors"] or ["ok"])[0][:60] for c, o in out[v].items()}, file=sys.stderr)
    OBSERVED.parent.mkdir(parents=True, exist_ok=True)
    OBSERVED.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    print(json.dumps(seconds), file=sys.stderr)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    _regenerate()


# --- the rows against the stored outcome: every stored release, no SGLang needed ------------------------------------
STORED = _stored()
ROW_CASES = [(v, c) for v in sorted(STORED, key=parse_version) for c in STORED[v]]


@pytest.fixture(scope="module")
def row_targets(tmp_path_factory) -> dict[str, Path]:
    return _write(tmp_path_factory.mktemp("nextn-rows"), list(CASES))


def _predicted(path: Path, version: str):
    """check's report of SGLang `version`'s NextN load of the target at `path`, and the checkpoint view it read."""
    from specbridge.cli.mtp_check import check_mtp, mtp_index

    results, _, _, _, view = check_mtp(mtp_index(path, True), path, [f"sglang=={version}"], None, None)
    return results[0].report, view.ckpt


@pytest.mark.parametrize(("version", "case"), ROW_CASES)
def test_rows_predict_the_stored_outcome(version, case, row_targets):
    """specbridge's SGLang NEXTN rows (engines/sglang/mtp.py) predict what the real loader did, release by release: the class,
    the first error, which NextN parameters were loaded, left at init or taken from the target, the decoder block one
    parameter at a time (verify.nextn_param_differences: the routed experts' fused tensors, the attention, the norms and
    the router; the shared experts as one group, fused into the routed experts' tensor on some releases), and which of
    the head's tensors were skipped."""
    obs = STORED[version][case]
    rep, view = _predicted(row_targets[case], version)
    assert rep.cls.name == obs["class"]
    if obs["errors"]:
        assert rep.errors and rep.errors[0].startswith(obs["errors"][0].split(" (")[0][:60]), (rep.errors, obs["errors"])
        return  # the load stopped there; what it left is the engine's order of tensors, not a row fact
    assert not rep.errors, rep.errors
    got = {"filled": obs["loaded"], "partial": obs["partial"], "unfilled": obs["left_at_init"]}
    assert nextn_param_differences(rep, got) == []
    # the decoder block parameter by parameter: every one SGLang built outside the shared experts is named by a row
    named = {p.name for p in rep.params if not p.name.endswith("*")}
    built = {*obs["loaded"], *obs["partial"], *obs["left_at_init"]}
    assert {n for n in built if ".shared_experts." not in n} <= named, sorted(built - named)
    skipped = {t.name for t in rep.tensors if t.status in ("dropped", "unused")}
    assert skipped == set(obs["skipped"]) & set(view.tensors)
