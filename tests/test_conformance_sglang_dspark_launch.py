"""SGLang's own DSPARK argument handling against the DSpark launch rows (D005, D006): the release's
arg_groups/speculative_hook.py `_handle_dspark` (and, when it accepts, the worker's dspark_config.py
`resolve_runtime_config`) run by src/specbridge/conformance/sglang_launch.py on a DSpark drafter (trained block_size 4)
and a blockless one, with each launch setting of the matrix; the same settings as a launch line go through
`check --launch`.

Compared per case: whether SGLang raised against whether check reports an error launch finding, and which of SGLang's
own warnings it logged (num_steps / topk overridden to 1, gamma defaulted to 7, "DSpark gamma mismatch") against the
warnings check reports. check's note that --speculative-dflash-block-size is not DSpark's flag is specbridge's (SGLang
says nothing): it is compared as SGLang's silence. The rows are one era (DSPARK_SG_LAUNCH, 0.5.16 … 0.5.23): CI runs
the newest installed release, the others are full-conformance runs; the counts are DSPARK_SG_LAUNCH_RUNS in
src/specbridge/engines/sglang/dspark.py."""

from __future__ import annotations

import json
import os
import shlex
import subprocess

import dflash_fixtures as dfx
import pytest
import test_conformance_sglang as base
from conftest import TINY_TARGET
from test_launch_dflash2 import findings

from specbridge.engines.sglang import DSPARK_SG_LAUNCH_RUNS

SELF = "tests/test_conformance_sglang_dspark_launch.py"
FLAGS = {
    "speculative_num_draft_tokens": "--speculative-num-draft-tokens",
    "speculative_num_steps": "--speculative-num-steps",
    "speculative_eagle_topk": "--speculative-eagle-topk",
    "speculative_dspark_block_size": "--speculative-dspark-block-size",
    "speculative_dflash_block_size": "--speculative-dflash-block-size",
}
# name -> (drafter, ServerArgs settings)
CASES = {
    "nothing": ("dspark", {}),
    "window-block+1": ("dspark", {"speculative_num_draft_tokens": 5}),
    "window-block": ("dspark", {"speculative_num_draft_tokens": 4}),
    "steps-topk": ("dspark", {"speculative_num_steps": 3, "speculative_eagle_topk": 2}),
    "gamma-block": ("dspark", {"speculative_dspark_block_size": 4}),
    "gamma-other": ("dspark", {"speculative_dspark_block_size": 6}),
    "gamma-zero": ("dspark", {"speculative_dspark_block_size": 0}),
    "gamma-vs-window": ("dspark", {"speculative_dspark_block_size": 6, "speculative_num_draft_tokens": 5}),
    "dflash-block-flag": ("dspark", {"speculative_dflash_block_size": 4}),
    "blockless-nothing": ("blockless", {}),
    "blockless-window-1": ("blockless", {"speculative_num_draft_tokens": 1}),
    "blockless-window-6": ("blockless", {"speculative_num_draft_tokens": 6}),
}
# SGLang's own warnings, by what they say; check's messages quote them
SAYS = {
    "steps": "overriding speculative_num_steps",
    "topk": "overriding speculative_eagle_topk",
    "gamma 7": "defaulting to 7",
    "mismatch": "DSpark gamma mismatch",
}
_READ = sorted({r.release for r in DSPARK_SG_LAUNCH_RUNS}, key=base._pv)
RELEASES = [v if v == _READ[-1] else pytest.param(v, marks=pytest.mark.full_conformance) for v in _READ]
_RESULTS: dict[str, dict] = {}


@pytest.fixture(scope="module")
def drafters(tmp_path_factory):
    root = tmp_path_factory.mktemp("sg-dspark-launch")
    core = {k: v for k, v in dfx.tensors_dspark().items() if not k.startswith(("embed_tokens.", "lm_head."))}
    blockless = dfx.config_dspark()
    del blockless["block_size"]
    return {"dspark": dfx.write(root / "dspark", dfx.config_dspark(), core), "blockless": dfx.write(root / "blockless", blockless, core)}


def _sglang(version: str, drafters: dict, tmp_path_factory) -> dict:
    if version not in _RESULTS:
        path = tmp_path_factory.mktemp("cases") / "cases.json"
        path.write_text(json.dumps([{"draft": str(drafters[d]), "args": a} for d, a in CASES.values()]))
        proc = subprocess.run(
            [str(base.PY), "-m", "specbridge.conformance.sglang_launch", "--sglang-dir", str(base.ENV / "wheels" / version)]
            + ["--target", str(TINY_TARGET), str(path)],
            capture_output=True,
            text=True,
            timeout=600,
            env={**os.environ, "PYTHONPATH": str(base.REPO / "src"), "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"},
        )
        assert proc.returncode == 0, proc.stderr[-4000:]
        _RESULTS[version] = dict(zip(CASES, json.loads(proc.stdout)))
    return _RESULTS[version]


def _line(draft, args: dict) -> str:
    head = ["python", "-m", "sglang.launch_server", "--model-path", str(TINY_TARGET), "--speculative-algorithm", "DSPARK"]
    return shlex.join(head + ["--speculative-draft-model-path", str(draft)] + [w for k, v in args.items() for w in (FLAGS[k], str(v))])


@pytest.mark.engine
@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("version", RELEASES)
def test_check_launch_matches_sglang_handle_dspark(version, case, drafters, tmp_path_factory):
    why = base._env_ready(version)
    if why:
        pytest.skip(why)
    r = _sglang(version, drafters, tmp_path_factory)[case]
    d, args = CASES[case]
    got = [f for f in findings(drafters[d], "dspark", f"sglang=={version}", _line(drafters[d], args)) if f.code in ("D005", "D006")]
    assert bool(r["error"]) == any(f.severity == "error" for f in got), (r, [f.message for f in got])
    if r["error"]:
        return
    sglang_says = {k for k, s in SAYS.items() if any(s in log for log in r["logs"])}
    check_says = {k for k, s in SAYS.items() if any(s in f.message for f in got)}
    assert sglang_says == check_says, (r["logs"], [f.message for f in got])


def test_launch_run_rows_cover_the_matrix():
    assert DSPARK_SG_LAUNCH_RUNS and all(run.test == SELF and run.cases == run.agreed == len(CASES) for run in DSPARK_SG_LAUNCH_RUNS)
