"""M rules: the multi-token-prediction (MTP / NextN) head a target ships inside its own checkpoint. Whether the
config announces the layers the weights hold, whether each layer is whole, whether the target's quantization
builds the head the way its tensors are stored, and what the launch line's draft steps do with it. The head is
found from the index (families/mtp.py); the load itself is the engine rows' (the L rules)."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterator
from functools import lru_cache

from ..engines.expr import row_context, value_or
from ..engines.simulate import row_origin
from ..later import Later
from .context import Context
from .findings import ERROR, INFO, WARNING
from .registry import CHECKPOINT, Hit, rule

MTP = ("mtp",)
# the tensor suffixes that name a module's parameters (what is left is the module a quantization method decides on)
PARAM_SUFFIX = Later(
    r"\.(weight|bias|weight_scale|weight_scale_inv|weight_scale_2|input_scale|weight_packed|weight_shape|qweight|qzeros|scales|g_idx|"
    r"e_score_correction_bias)$"
)
EXPERT = Later(r"\.experts\.\d+\..*$")
# the modules a quantization method builds as quantized linears: projections and the routed experts (not norms, not
# DeepSeek's router gate, which is built without the quantization config)
QUANTIZABLE = Later(r"(_proj|_proj_with_mqa|\.experts|^(?:language_model\.)?mtp\.fc)$")
FLOAT8_OR_PACKED = ("F8_E4M3", "F8_E5M2", "U8", "I8", "I32", "F4", "U4")


def _layers_text(h) -> str:
    return ", ".join(str(n) for n in range(h.base, h.base + h.announced)) or "none"


@rule(
    "M001",
    "MTP head announced but absent",
    severity=ERROR,
    scope=CHECKPOINT,
    families=MTP,
    fix="serve the publisher's checkpoint that keeps the MTP layers (or a re-quantization that keeps them), or serve without "
    "speculative decoding.",
)
def head_absent(c: Context) -> Iterator[Hit]:
    """The config announces MTP layers (`num_nextn_predict_layers`, `mtp_num_hidden_layers`, …) and the index
    names no tensor of any of them. Engines build the announced layers anyway: vLLM's `deepseek_mtp.py` raises
    "MTP speculative decoding layer N weights missing from checkpoint" from 0.17.0 (vllm PR #35548), while its
    other MTP classes, and every release before, fill them from `torch.empty` and accept nothing (GLM-5 NVFP4:
    vllm #35548; MiniMax-M2.5 announces MTP and ships none, MiniMax-AI/MiniMax-M2.5 #8). Re-quantizations that
    drop the head are the usual cause. Per engine release, the L rules say which of the two happens.
    """
    h = c.mtp
    if h is not None and h.announced and not h.layers:
        yield Hit(
            ERROR,
            f"the config announces {h.announced} MTP layer(s) ({h.announced_by}: layers {_layers_text(h)}) and the weights hold "
            "none of them: an engine serving this target with MTP either refuses to start or runs the head on uninitialised "
            "memory (≈0 accepted tokens); the engine findings say which.",
        )


@rule(
    "M002",
    "MTP layers missing or incomplete",
    severity=ERROR,
    scope=CHECKPOINT,
    families=MTP,
    fix="restore the missing MTP tensors from the publisher's checkpoint (or serve without MTP).",
)
def head_incomplete(c: Context) -> Iterator[Hit]:
    """Some announced MTP layers have tensors and others none, or a layer lacks a part every layer of its
    style has (enorm, hnorm, eh_proj, the shared head's norm, the decoder block). vLLM's completeness check
    counts a layer as present when any one tensor reached it, so a partial layer loads without an error and
    its missing parts keep their initial values.
    """
    h = c.mtp
    if h is None or not h.layers:
        return
    missing = h.missing_layers()
    if missing:
        yield Hit(
            ERROR,
            f"the config announces {h.announced} MTP layers ({h.announced_by}) but layers {missing} have no tensor: the engine "
            "builds them and fills them from nothing.",
        )
    for layer in h.layers:
        if layer.missing:
            yield Hit(
                ERROR,
                f"MTP layer {layer.index} ({layer.prefix}*) has no {', '.join(layer.missing)}: those parts keep their initial "
                "values (a partial layer passes vLLM's completeness check).",
            )


@rule(
    "M003",
    "MTP tensors the config does not announce",
    severity=WARNING,
    scope=CHECKPOINT,
    families=MTP,
    fix="set the config's MTP layer count (`num_nextn_predict_layers` for DeepSeek/GLM-style targets) to the layers the weights hold.",
)
def head_unannounced(c: Context) -> Iterator[Hit]:
    """The weights hold MTP layers the config does not announce. Engines size the head from the config
    (vLLM: `n_predict = num_nextn_predict_layers`, vllm/config/speculative.py): unannounced layers are never
    built, so the head is not served (no layer announced) or its extra layers are skipped.
    """
    h = c.mtp
    if h is None or not h.layers:
        return
    if not h.announced:
        yield Hit(
            WARNING,
            f"{len(h.layers)} MTP layer(s) in the weights ({h.layers[0].prefix}*) but the config announces none: engines build "
            "no MTP head for this target, and method mtp / NEXTN has nothing to run.",
        )
    elif h.extra_layers():
        yield Hit(WARNING, f"MTP layers {h.extra_layers()} are beyond the {h.announced} the config announces: never loaded.")


def _module(name: str) -> str:
    """The module a tensor belongs to, as a quantization method names it (a routed expert's is its FusedMoE `experts`)."""
    return EXPERT.sub(".experts", PARAM_SUFFIX.sub("", name))


def _skipped(module: str, entries: list[str], match: str) -> bool:
    for e in entries:
        if match == "regex" and e.startswith("re:"):
            if re.match(e[3:], module):
                return True
        elif match == "wildcard":
            if fnmatch.fnmatchcase(module, e) or e in module:
                return True
        elif module == e:
            return True
    return False


def _fused(module: str, fused_by_name) -> str:
    """The name the engine matches a shard's module by: its fused module's (q_proj → qkv_proj) where the class says so."""
    head, _, leaf = module.rpartition(".")
    return next((f"{head}.{fused}" for fused, parts in fused_by_name if leaf in parts), module)


def _quant(c: Context) -> dict | None:
    cfg = c.ckpt.config or {}
    q = cfg.get("quantization_config") or (cfg.get("text_config") or {}).get("quantization_config")
    return q if isinstance(q, dict) else None


@lru_cache(maxsize=16)
def _layer_modules(layer) -> dict[str, list[str]]:
    """The quantizable modules of an MTP layer (its decoder block's projections and experts, Qwen's mtp.fc) -> their
    tensor names. Cached: every engine range's report asks again for the same layer (a DeepSeek-V3 MTP layer is some
    1,500 tensors), and the answer is only read."""
    modules: dict[str, list[str]] = {}
    for n in layer.tensors:
        decoder = n.startswith(layer.prefix) and any(w in n for w in ("self_attn.", "mlp.", "linear_attn.", "mixer."))
        # Qwen3-Next / Qwen3.5's mtp.fc is a quantizable linear shared by the layers; DeepSeek/GLM's eh_proj is a plain one
        if (decoder or ".fc." in f".{n}") and QUANTIZABLE.search(mod := _module(n)):
            modules.setdefault(mod, []).append(n)
    return modules


def _quant_mismatches(c: Context, h, q: dict, skip) -> tuple[list[str], list[str]]:
    """(modules built quantized over unquantized tensors, modules built unquantized over quantized tensors), in the
    engine's names for them (a fused qkv_proj where the class matches fused modules by name)."""
    entries = [e for k in skip.keys for e in (q.get(k) or []) if isinstance(e, str)]
    if skip.entry_rename:
        entries = [e.replace(*skip.entry_rename) for e in entries]
    built_q, stored_q = [], []
    for layer in h.layers:
        for mod, names in _layer_modules(layer).items():
            if not any(n.endswith((".weight", ".weight_packed", ".qweight")) for n in names):
                continue
            stored = any(n.rsplit(".", 1)[-1] in skip.scale_words for n in names) or any(
                c.ckpt.tensors[n].dtype in FLOAT8_OR_PACKED for n in names if n in c.ckpt.tensors and n.endswith(".weight")
            )
            engine_mod = _fused(re.sub(*skip.module_rename, mod) if skip.module_rename else mod, skip.fused_by_name)
            skipped = skip.everything or _skipped(engine_mod, entries, skip.match)
            # said in the engine's own name: the one an ignore list has to use
            if skipped and stored:
                stored_q.append(engine_mod)
            elif not skipped and not stored:
                built_q.append(engine_mod)
    return list(dict.fromkeys(built_q)), list(dict.fromkeys(stored_q))


@rule(
    "M004",
    "MTP layers quantized otherwise than the engine builds them",
    severity=ERROR,
    families=MTP,
    fix="make the quantization config's ignore list name the MTP layers exactly when their tensors are unquantized "
    "(or re-quantize the head with the rest of the target).",
)
def head_quantization(c: Context) -> Iterator[Hit]:
    """The engine builds the MTP layers with the target's quantization config, and its ignore list (per method:
    FP8 `ignored_layers` / `modules_to_not_convert`, compressed-tensors `ignore`, ModelOpt `exclude_modules`)
    decides module by module. A module built quantized whose tensors are stored unquantized loads its weight and
    never its scales, which keep `torch.empty` values: no error, and the head accepts nothing (vllm #37667; SGLang
    built GLM's MTP layer quantized for an ignore list that did not name it and accepted exactly 1.000, sglang
    #35797). A module left unquantized whose tensors carry scales raises on the scale names at load.
    """
    h, q = c.mtp, _quant(c)
    if h is None or not h.layers or q is None:
        return
    method = str(q.get("quant_method", ""))
    skip = next((s for s in c.rep.cls.quant_skips if s.method == method), None)
    if skip is None:
        if c.rep.cls.quant_skips:
            yield Hit(INFO, f"{c.eng}: how quant_method {method!r} reaches the MTP layers is not in specbridge's rows; not checked.")
        return
    built_q, stored_q = _quant_mismatches(c, h, q, skip)
    if built_q:
        yield Hit(
            ERROR,
            f"{c.eng} builds {len(built_q)} MTP module(s) quantized ({method}; {'/'.join(skip.keys)} does not name them, e.g. "
            f"{built_q[0]}) but their tensors are unquantized: the weights load, their scales are never written and keep "
            "uninitialised values — no error, and the head accepts nothing.",
            f"add the MTP layer's modules to quantization_config.{skip.keys[0]} (e.g. {built_q[0]!r}), or quantize the head too",
        )
    if stored_q:
        yield Hit(
            ERROR,
            f"{c.eng} builds {len(stored_q)} MTP module(s) unquantized ({'/'.join(skip.keys)} names them, e.g. {stored_q[0]}) but "
            "their tensors are quantized: the scale tensors have no parameter and the load raises.",
            f"remove {stored_q[0]!r} from quantization_config.{skip.keys[0]}, or store the head unquantized",
        )


@rule(
    "M005",
    "draft steps against the MTP layer count",
    severity=WARNING,
    families=MTP,
    fix="set the draft steps (vLLM num_speculative_tokens, SGLang --speculative-num-steps) to the MTP layer count or a multiple of it.",
)
def head_steps(c: Context) -> Iterator[Hit]:
    """With `--launch`: the launch line's draft steps against the MTP layers the target has. vLLM sizes the head
    from `num_nextn_predict_layers` and refuses a `num_speculative_tokens` above it that is not a multiple of it;
    above it and a multiple, it runs the same layers again (`spec_step_idx % n_predict`) and warns that this may
    lower acceptance (vllm/config/speculative.py, every release read). The class's `launch_checks` rows say it.
    """
    if c.launch is None or c.launch.steps is None:
        return
    ns = {**c.rep.ns, "steps": c.launch.steps}
    for chk in (k for k in c.rep.cls.launch_checks if k.code in ("", "M005")):
        with row_context(lambda chk=chk: f"{row_origin(c.rep.engine, c.rep.cls)}: launch check {chk.when!r}"):
            hit = bool(value_or(chk.when, ns, False))  # the config's or the line's values cannot decide: no hit
        if hit:
            yield Hit(ERROR if chk.severity == "error" else WARNING, f"{c.eng}: " + chk.message.format(**ns))
            return
