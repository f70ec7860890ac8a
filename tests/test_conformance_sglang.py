"""Conformance with SGLang's own loader code (issue #7): `check`'s prediction vs what SGLang really does.

For each installed SGLang version × each fixture (and mutated copies), the harness
src/specbridge/conformance/sglang_loader.py builds SGLang's own drafter class and runs its own
`load_weights` (in the cached environment of scripts/setup_sglang_conformance.sh, as a subprocess: it
needs torch + sglang), and this test compares, in-process, with `check(…, "sglang==V")`'s LoadReport:

  * the parameter set, with shapes          (SGLang's named_parameters() vs the table's parameters)
  * filled / partial / unfilled parameters   (NaN sentinel vs ParamFate.status)
  * per checkpoint name: which parameter (and shard of a fused one) it was loaded into
  * consumed / skipped checkpoint names, hot_token_id set or not, dispatched or not
  * whether SGLang raised (construction or loading) vs whether check predicts an engine error

Speculators-format fixtures: SGLang cannot dispatch them (check: L005); both sides then use
LlamaForCausalLMEagle3 over specbridge's flattened config (the harness drops its null-valued keys, as
`specbridge convert` does; see test_target_hidden_size_null for why).

Known disagreements are listed in KNOWN with the SGLang source line responsible; they are strict xfails,
so fixing the tables turns them into failures that ask for the entry to be removed.
Skipped (with the reason) when the cached environment is absent.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import SF_HF, SF_SGLANG, SPEC_CONVERT, SPEC_TRAIN, STORY, mutate

from specbridge.conformance.compare import messages, sglang_diffs, sglang_observed, sglang_predicted
from specbridge.engines import sglang as _sglang_table
from specbridge.engines import simulate as S
from specbridge.engines.registry import conformance_releases
from specbridge.engines.spec import in_release_range
from specbridge.engines.spec import parse_version as _pv
from specbridge.rules.check import check
from specbridge.view import open_view

REPO = Path(__file__).resolve().parents[1]
ENV = Path(os.environ.get("SPECBRIDGE_SGLANG_CONFORMANCE", Path.home() / ".cache" / "specbridge" / "sglang-conformance"))
PY = ENV / "venv" / "bin" / "python"
# every SGLang release the engine table says was run (FamilyRange.runs in src/specbridge/engines/sglang/eagle3.py): the table's
# claim is rerun here, so adding a Run row there is what adds a release to this test
VERSIONS = conformance_releases("sglang", "tests/test_conformance_sglang.py")  # SPECBRIDGE_CONFORMANCE=per-era: newest per era


# --- cases: the fixtures, then mutated copies ------------------------------------------------------


def _zeros(dtype: str, shape: list[int]) -> tuple[str, list[int], bytes]:
    size = {"BF16": 2, "F16": 2, "F32": 4}[dtype]
    n = 1
    for s in shape:
        n *= s
    return dtype, shape, b"\x00" * (n * size)


def _drop(*names):
    return lambda t: {k: v for k, v in t.items() if k not in names}


def _prefix(p):
    return lambda t: {p + k: v for k, v in t.items()}


def _add(**new):
    return lambda t: {**t, **{k.replace("__", "."): _zeros(t["fc.weight"][0], shape) for k, shape in new.items()}}


def _two_layers(t):
    out = dict(t)
    for k, (dt, shape, data) in t.items():
        if k.startswith("layers.0.") and "hidden_norm" not in k:
            if any(p in k for p in ("q_proj", "k_proj", "v_proj")):  # later layers read H, not 2H
                shape, data = [shape[0], shape[1] // 2], data[: len(data) // 2]
            out[k.replace("layers.0.", "layers.1.")] = (dt, shape, data)
    return out


def _two_layers_with_hidden_norm(t):
    out = _two_layers(t)
    out["layers.1.hidden_norm.weight"] = t["layers.0.hidden_norm.weight"]
    return out


def _cfg(**kv):
    def f(c):
        for k, v in kv.items():
            if k == "eagle_config":
                c.setdefault("eagle_config", {}).update(v)
            elif v is _DELETE:
                c.pop(k, None)
            else:
                c[k] = v

    return f


_DELETE = object()

FIXTURES = {
    "story": STORY,
    "specforge-export-hf": SF_HF,
    "specforge-export-sglang": SF_SGLANG,
    "speculators-convert": SPEC_CONVERT,
    "speculators-train-save": SPEC_TRAIN,
}
# name -> (source, tensors mutation, config mutation)
MUTATIONS = {
    "missing-up_proj": (SF_HF, _drop("midlayer.mlp.up_proj.weight"), None),  # one shard of gate_up_proj
    "missing-lm_head": (SF_HF, _drop("lm_head.weight"), None),
    "missing-layers-norm": (STORY, _drop("layers.0.input_layernorm.weight"), None),
    "unknown-key": (SF_SGLANG, lambda t: {**t, "decoder.extra.weight": t["norm.weight"]}, None),
    "model-prefix-midlayer": (SF_HF, _prefix("model."), None),
    "model-prefix-layers": (STORY, _prefix("model."), None),
    "two-layers": (STORY, _two_layers, _cfg(num_hidden_layers=2)),
    "two-layers-hidden-norms": (STORY, _two_layers_with_hidden_norm, _cfg(num_hidden_layers=2)),
    "intermediate-larger": (SF_SGLANG, None, _cfg(intermediate_size=256)),  # checkpoint narrower than the engine
    "intermediate-smaller": (SF_SGLANG, None, _cfg(intermediate_size=64)),  # checkpoint wider
    "more-heads": (SF_HF, None, _cfg(num_attention_heads=4)),  # q rows 128, checkpoint 64
    "fewer-heads": (SF_HF, None, _cfg(num_attention_heads=1, num_key_value_heads=1)),  # q/k/v rows 32, checkpoint 64
    "hidden-larger": (SF_HF, None, _cfg(hidden_size=128)),
    "vocab-larger": (SF_HF, None, _cfg(vocab_size=1024)),
    "attention-bias": (
        SF_HF,
        _add(midlayer__self_attn__o_proj__bias=[64], midlayer__self_attn__q_proj__bias=[64]),
        _cfg(attention_bias=True),
    ),
    "draft-vocab-absent": (SF_HF, None, _cfg(draft_vocab_size=_DELETE)),
    "draft-vocab-null": (SF_HF, None, _cfg(draft_vocab_size=None)),
    "tied": (SF_HF, None, _cfg(tie_word_embeddings=True)),
    "fc-bias": (SF_HF, _add(fc__bias=[64]), _cfg(bias=True)),
    "four-aux": (
        SF_HF,
        lambda t: {**t, "fc.weight": _zeros("BF16", [64, 256])},
        _cfg(eagle_config={"eagle_aux_hidden_state_layer_ids": [0, 1, 2, 3]}),
    ),
    "target-hidden-128": (SF_HF, lambda t: {**t, "fc.weight": _zeros("BF16", [64, 384])}, _cfg(target_hidden_size=128)),
    "fc-norm-legacy-names": (
        SF_HF,
        _add(aux_norm_low__weight=[64], aux_norm_mid__weight=[64], aux_norm_high__weight=[64]),
        _cfg(fc_norm=True),
    ),
    "norm-before-fc": (SF_HF, _add(input_norm__weight=[192]), _cfg(eagle_config={"norm_before_fc": True})),
    "no-aux-hidden-state": (SF_HF, None, _cfg(eagle_config={"use_aux_hidden_state": False})),
    "target-hidden-null": (SF_HF, None, _cfg(target_hidden_size=None)),
}
CASES = list(FIXTURES) + list(MUTATIONS)

MIDLAYER = tuple(v for v in VERSIONS if _pv(v) < _pv("0.5.12"))
E3 = "sglang/srt/models/llama_eagle3.py"
LIN = "sglang/srt/layers/linear.py"
# (versions, cases) -> what disagrees, and the SGLang line responsible. Strict xfails: when the tables are
# fixed the test XPASSes, fails, and asks for the entry to go.
_KNOWN: list = [
    # Every disagreement found so far has been fixed in the tables (o_proj bias, fc always built,
    # fc_norm from 0.5.12, input_norm from 0.5.20, hidden_norm in every layer, TP-dim truncation and
    # zero-padding). A new one goes here, with the SGLang source line responsible, as a strict xfail.
]
KNOWN: dict[tuple[str, str], str] = {(v, c): why for vs, cs, why in _KNOWN for v in vs for c in cs}


@pytest.fixture(scope="session")
def cases(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("sglang-conformance")
    out = dict(FIXTURES)
    for name, (src, tensors, config) in MUTATIONS.items():
        out[name] = mutate(src, root / name, tensors=tensors, config=config)
    return out


_RESULTS: dict[str, dict] = {}


def family_releases(family: str) -> list[str]:
    """Per modelled range of a drafter family (the FamilyRange rows), the releases read that this environment holds
    (SPECBRIDGE_CONFORMANCE=per-era, as CI: the newest of them); all the read releases when none is installed (their
    tests then skip)."""
    wheels = ENV / "wheels"
    have = {p.name for p in wheels.iterdir() if (p / ".specbridge-ok").is_file()} if wheels.is_dir() else set()
    rows = [r for r in _sglang_table.FAMILY_RANGES if r.family == family]
    out: list[str] = []
    for row in (r for r in rows if r.classes):
        # a range also lists releases read to place its start (0.5.18, read to show DFlash2 is not yet there): only
        # those it covers build its classes
        got = sorted((v for v in row.versions_read if v in have and in_release_range(v, row.first, row.last)), key=_pv)
        out += got[-1:] if os.environ.get("SPECBRIDGE_CONFORMANCE") == "per-era" else got
    return out or [v for r in rows for v in r.versions_read]


def family_case(version: str, path: Path, r: dict, family: str, cls_name: str) -> list[str]:
    """One case of a drafter-family matrix: the harness built SGLang's `cls_name` for this release, and what check
    predicts for the family differs from what the loader did in these ways (empty: they agree)."""
    from specbridge.families.table import BY_NAME

    assert not r.get("harness_failed"), r["errors"]
    assert r["sglang_version"] == version and r["class"] == cls_name, r.get("class")
    [res] = check(open_view(path), f"sglang=={version}", family=BY_NAME[family])
    return differences(predicted(res.report), observed(r))


def family_runs_agree(family: str, test: str, cases: int, known: dict) -> None:
    """Each Run row of a family's SGLang ranges that names `test` (a family may have several matrices, one per class
    group: the EAGLE-1 Llama and Qwen2 classes) is a release its range covers, run over the whole matrix."""
    runs = [(row, run) for row in _sglang_table.FAMILY_RANGES if row.family == family for run in row.runs if run.test == test]
    assert runs
    for row, run in runs:
        assert in_release_range(run.release, row.first, row.last)
        assert run.cases == cases and run.agreed == run.cases - sum(1 for (v, _c) in known if v == run.release)


def _env_ready(version: str) -> str | None:
    if not PY.is_file():
        return f"SGLang conformance environment not found at {ENV} (run scripts/setup_sglang_conformance.sh)"
    if not (ENV / "wheels" / version / ".specbridge-ok").is_file():
        return f"SGLang {version} is not installed in {ENV} (SPECBRIDGE_SGLANG_VERSIONS=… scripts/setup_sglang_conformance.sh)"
    return None


def real(version: str, cases: dict[str, Path], cache: dict[str, dict] = _RESULTS) -> dict[str, dict]:
    """One harness process per version, over every case of a matrix (SGLang's import is the slow part); `cache`:
    one per matrix (the DFlash and EAGLE-1 matrices keep their own)."""
    if version not in cache:
        cache[version] = harness(version, cases)
    return cache[version]


def harness(version: str, paths: dict, *flags: str) -> dict[str, dict]:
    """One sglang_loader process for one release over the given checkpoints (`flags`: `--nextn` for targets):
    name -> outcome."""
    proc = subprocess.run(
        [
            str(PY),
            "-m",
            "specbridge.conformance.sglang_loader",
            *flags,
            "--sglang-dir",
            str(ENV / "wheels" / version),
            *map(str, paths.values()),
        ],
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "PYTHONPATH": str(REPO / "src"), "HF_HUB_OFFLINE": "1"},
    )
    assert proc.returncode == 0, f"harness failed for sglang {version}:\n{proc.stderr[-4000:]}"
    got = json.loads(proc.stdout)
    return dict(zip(paths, got if isinstance(got, list) else [got]))


# --- the prediction, in the harness's terms: specbridge.conformance.compare (the comparison `specbridge verify` reports)


def predicted(rep: S.LoadReport) -> dict:
    return sglang_predicted(rep)


def observed(r: dict) -> dict:
    return sglang_observed(r)


def differences(pred: dict, obs: dict) -> list[str]:
    """Human-readable disagreements; empty when check's prediction is what SGLang did."""
    return messages(sglang_diffs(pred, obs))


@pytest.mark.engine
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("version", VERSIONS)
def test_check_matches_sglang_loader(version, case, cases, request):
    why = _env_ready(version)
    if why:
        pytest.skip(why)
    if (version, case) in KNOWN:
        request.applymarker(pytest.mark.xfail(strict=True, reason=KNOWN[(version, case)]))
    r = real(version, cases)[case]
    assert not r.get("harness_failed"), r["errors"]
    assert r["sglang_version"] == version
    [res] = check(open_view(cases[case]), f"sglang=={version}")
    diff = differences(predicted(res.report), observed(r))
    assert not diff, f"sglang {version}, {case}:\n  " + "\n  ".join(diff)


@pytest.mark.engine
@pytest.mark.parametrize("version", VERSIONS)
def test_real_parameter_names_are_sglangs(version, cases):
    """Sanity of the harness itself: the names come from SGLang's class (midlayer up to 0.5.11)."""
    why = _env_ready(version)
    if why:
        pytest.skip(why)
    r = real(version, cases)["story"]
    names = set(r["params"])
    dec = "model.midlayer." if version in MIDLAYER else "model.layers.0."
    assert f"{dec}self_attn.qkv_proj.weight" in names and f"{dec}mlp.gate_up_proj.weight" in names
    assert r["class"] == "LlamaForCausalLMEagle3" and r["module"] == "sglang.srt.models.llama_eagle3"
    # the story's bug is real on the midlayer releases and fixed after
    assert (f"{dec}self_attn.qkv_proj.weight" in r["unfilled"]) == (version in MIDLAYER)


def test_runs_recorded_in_the_table_match_this_matrix():
    """Each Run row claims agreement on every case of this test's matrix."""
    assert len(VERSIONS) == len(set(VERSIONS)) >= (6 if os.environ.get("SPECBRIDGE_CONFORMANCE") == "per-era" else 9)
    for era in _sglang_table.ERAS:
        for r in era.runs:
            assert r.cases == len(CASES) and r.agreed == r.cases - sum(1 for (v, _c) in KNOWN if v == r.release), (era.name, r)
            assert in_release_range(r.release, era.first, era.last), (era.name, r.release)
