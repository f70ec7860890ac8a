"""vLLM side of `--capture vllm` (run by capture_vllm.build_capture_vllm with the vLLM venv's python).

    <vllm-venv>/bin/python -m specbridge.train.vllm_capture_worker --serve   (PYTHONPATH = specbridge's src)

reads job-file paths on stdin, one per line, and runs them all on one engine (train, then validation).

Greedy-generates every prompt with vLLM's `extract_hidden_states` speculative method and a
SpecbridgeHiddenStatesConnector (vllm_connector.py), which saves each finished request's aux states
(prompt + response, all but the last token); then packs them into a "specbridge-capture/1" directory
with capture.write_shard, as selfdistill does. See capture_vllm.py for the design and the vLLM files
it rests on. Imports vLLM, so it runs only in the vLLM venv; the `__main__` guard matters because
vLLM spawns its engine and worker processes.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path


def final_norm(target_path: Path):
    """The target's final RMSNorm (weight, eps), read from its checkpoint."""
    from safetensors import safe_open

    config = json.loads((target_path / "config.json").read_text())
    eps = float(config.get("rms_norm_eps", 1e-6))
    for f in sorted(target_path.glob("*.safetensors")):
        with safe_open(str(f), "pt") as st:
            for name in ("model.norm.weight", "model.language_model.norm.weight", "norm.weight"):
                if name in st.keys():
                    return st.get_tensor(name), eps
    raise SystemExit(f"{target_path}: no final norm weight (model.norm.weight) in its safetensors")


def rms_norm(x, weight, eps: float):
    """transformers' LlamaRMSNorm, in float32."""
    import torch

    x = x.to(torch.float32)
    return weight.to(torch.float32) * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))


def make_llm(job: dict):
    from vllm import LLM

    target = job["target_path"]
    return LLM(
        model=target,
        dtype=job["dtype"],
        seed=0,
        max_model_len=job["max_model_len"],  # the driver restarts the engine when a job needs more
        tensor_parallel_size=job["tp"],
        pipeline_parallel_size=job["pp"],
        enable_prefix_caching=False,  # a cached prefix is not recomputed: its states would never be captured
        speculative_config={
            "method": "extract_hidden_states",
            "num_speculative_tokens": 1,
            "draft_model_config": {"hf_config": {"eagle_aux_hidden_state_layer_ids": job["vllm_aux_layer_ids"]}},
        },
        kv_transfer_config={
            "kv_connector": "SpecbridgeHiddenStatesConnector",
            "kv_connector_module_path": "specbridge.train.vllm_connector",
            "kv_role": "kv_producer",
            "kv_connector_extra_config": {"shared_storage_path": job["states_dir"], "use_synchronization_lock": False},
        },
    )


def wait_for(paths: list[str], llm, timeout: float = 120.0) -> None:
    """A finished request's states are written in the engine step AFTER it finished (the connector's
    get_finished); if the engine went idle first, one throwaway 1-token request drives a step."""
    t0 = time.time()
    nudged = False
    while not all(os.path.exists(p) for p in paths):
        if time.time() - t0 > timeout:
            missing = [p for p in paths if not os.path.exists(p)]
            raise SystemExit(f"vLLM wrote no hidden states for {len(missing)} requests (e.g. {missing[0]})")
        if not nudged and time.time() - t0 > 2:
            from vllm import SamplingParams

            llm.generate([{"prompt_token_ids": [0]}], SamplingParams(max_tokens=1), use_tqdm=False)
            nudged = True
        time.sleep(0.2)


def serve() -> int:
    """Jobs by path on stdin, one per line, all on one engine (made for the first); `<job>.done` answers."""
    import traceback

    llm = None
    for line in sys.stdin:
        job_file = Path(line.strip())
        job = json.loads(job_file.read_text())
        try:
            if llm is None:
                llm = make_llm(job)
            capture(llm, job)
            answer = {"ok": True}
        except Exception as exc:  # reported to the train process, which raises it
            traceback.print_exc()
            answer = {"error": f"{type(exc).__name__}: {exc}"}
        job_file.with_suffix(".done").write_text(json.dumps(answer))
        if "error" in answer:
            return 1
    return 0


def capture(llm, job: dict) -> None:
    import torch
    from vllm import SamplingParams

    from specbridge.train import capture as cap
    from specbridge.train.selfdistill import RESPONSES

    out = Path(job["out"])
    target_path = Path(job["target_path"])
    norm_w, eps = final_norm(target_path)
    params = SamplingParams(
        temperature=0.0,
        max_tokens=job["max_new_tokens"],
        stop_token_ids=job["eos_ids"],
        skip_special_tokens=True,
        extra_args={"kv_transfer_params": {"include_output_tokens": True}},
    )
    t0 = time.time()
    outputs = llm.generate([{"prompt_token_ids": ids} for ids in job["prompt_ids"]], params, use_tqdm=True)
    gen_s = time.time() - t0
    paths = [o.kv_transfer_params["hidden_states_path"] for o in outputs]
    wait_for(paths, llm)
    tmp = out.with_name(out.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    columns, final_column = job["columns"], job["final_column"]
    shards, pending, lines, response_tokens = [], [], [], 0
    from safetensors.torch import load_file

    for prompt, ids, o, path in zip(job["prompts"], job["prompt_ids"], outputs, paths):
        resp = list(o.outputs[0].token_ids)
        seq = list(ids) + resp
        L, P = len(seq), len(ids)
        got = load_file(path)
        states, fed = got["hidden_states"], got["token_ids"].tolist()
        if fed != seq[: L - 1]:
            raise SystemExit(f"vLLM's saved token ids do not match prompt + response for a request ({path})")
        H = states.shape[-1]
        aux = torch.zeros(L, len(columns) * H, dtype=torch.bfloat16)
        aux[: L - 1] = states[:, columns].reshape(L - 1, -1).to(torch.bfloat16)
        fin = torch.zeros(L, H, dtype=torch.bfloat16)
        fin32 = rms_norm(states[:, final_column], norm_w, eps)
        fin[: L - 1] = fin32.to(torch.bfloat16)
        if job.get("float32_states_dir"):  # parity checks: the states before the bf16 of the capture format
            from safetensors.torch import save_file

            Path(job["float32_states_dir"]).mkdir(parents=True, exist_ok=True)
            save_file(
                {"aux": states[:, columns].float().contiguous(), "final": fin32.contiguous(), "input_ids": torch.tensor(seq[: L - 1])},
                str(Path(job["float32_states_dir"]) / f"{len(lines):05d}.safetensors"),
            )
        nxt = torch.zeros(L, dtype=torch.int32)
        nxt[P - 1 : L - 1] = torch.tensor(resp, dtype=torch.int32)  # greedy: the sampled token is the argmax
        loss = torch.zeros(L, dtype=torch.bool)
        loss[P - 1 : L - 1] = True
        pending.append(
            {
                "input_ids": torch.tensor(seq, dtype=torch.int32),
                "loss_mask": loss,
                "aux_hidden": aux,
                "final_hidden": fin,
                "target_next": nxt,
            }
        )
        response_tokens += len(resp)
        lines.append(json.dumps({"prompt": prompt, "prompt_ids": list(ids), "response_ids": resp, "text": o.outputs[0].text}))
        if sum(p["input_ids"].shape[0] for p in pending) >= 16384:
            shards.append(cap.write_shard(tmp, len(shards), pending))
            pending = []
        os.remove(path)
    if pending:
        shards.append(cap.write_shard(tmp, len(shards), pending))
    (tmp / RESPONSES).write_text("".join(line + "\n" for line in lines))
    import vllm

    manifest = cap.one_pass_manifest(
        shards,
        response_tokens,
        gen_s,
        job["manifest_base"],
        capture_engine=f"vllm {vllm.__version__} extract_hidden_states, {job['dtype']}, tp={job['tp']} pp={job['pp']}",
        vllm_aux_layer_ids=job["vllm_aux_layer_ids"],
        final_hidden_from="vLLM aux id N (final pre-norm) through the target's final RMSNorm, float32",
    )
    (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2))
    os.replace(tmp, out)
    print(f"vLLM capture: {response_tokens} response tokens for {manifest['num_seqs']} prompts in {gen_s:.1f}s", file=sys.stderr)


if __name__ == "__main__":
    if sys.argv[1:] != ["--serve"]:
        sys.exit("usage: python -m specbridge.train.vllm_capture_worker --serve   (job file paths on stdin)")
    sys.exit(serve())
