"""Plan an EAGLE-1/2 conversion: the research layout (yuhuili's EAGLE, SafeAILab/EAGLE eagle/model/cnets.py: `fc.weight
[H, 2H]` with or without `fc.bias`, Llama decoder layers `layers.N.*` of which layer 0 has no input_layernorm,
`embed_tokens.weight`, a plain LlamaForCausalLM config) into the layout an engine's EAGLE-1 class reads. Never into
EAGLE-3 (another architecture: fc over three target states, not over (embedding, feature)), never a change that is
not real.

What each engine class needs is read from its rows (engines/vllm/eagle1.py EAGLE1_CLASS, engines/sglang/eagle1.py _eagle1_class),
not restated here:
- the names: both loaders prefix every name but lm_head with `model.` (vLLM llama_eagle.py EagleLlamaForCausalLM.
  load_weights, SGLang llama_eagle.py LlamaForCausalLMEagle.load_weights), so a `model.`-prefixed save becomes
  `model.model.*`: vLLM raises, SGLang skips every name and drafts at random. The destination names are unprefixed;
- the architecture: the one the release's dispatch builds the class from (vLLM rewrites LlamaForCausalLM to
  EagleLlamaForCausalLM for method eagle and has no class for SGLang's LlamaForCausalLMEagle; SGLang builds the plain
  target class for LlamaForCausalLM). An architecture the dispatch already builds the class from is kept;
- fc.bias: SGLang's fc is nn.Linear(2H, H) with a bias always; a drafter trained without one gets that bias at its
  random default initialisation, so zeros are written (what the drafter computed in training). vLLM builds fc without
  a bias: from 0.25.0 it ignores the name (carried, and the check says it is lost); before 0.25.0 its params_dict loop
  raises on it (KeyError), so it is dropped, with a warning: no layout makes a trained bias load there;
- layer 0's input_layernorm: neither class builds one (an Identity, EAGLE's cnets.py); vLLM raises on the name,
  SGLang skips it. Dropped, with a warning: no layout makes the engine apply it;
- lm_head: vLLM's class has no head of its own (a shipped lm_head raises); SGLang drops the name. Dropped where the
  class neither builds nor drops it;
- tie_word_embeddings: SGLang's class makes lm_head the embedding module, which the worker cannot replace by the
  target's head (AttributeError): written false where a release raises on it. The drafter has no head of its own.
"""

from __future__ import annotations

import copy
import re

from ..checkpoint.safetensors import DTYPE_BITS
from ..checkpoint.write import OutTensor
from ..engines.registry import NotModelled, family_builds, placements
from ..layouts.table import INPUT_OF_LAYER, LAYOUTS, Layout
from ..record import record, replace
from .common import ConvertError, ConvertRefused, Plan
from .dflash import DFLASH_LAYOUTS

SOURCES = ("SafeAILab/EAGLE@35c78f6 eagle/model/cnets.py (layer 0 without input_layernorm)",)
EAGLE1_LAYOUTS: dict[str, Layout] = {
    lay.name: lay
    for lay in (
        Layout(
            "eagle1-vllm",
            "vLLM EagleLlamaForCausalLM (method eagle): names unprefixed, no lm_head, LlamaForCausalLM / EagleLlamaForCausalLM",
            (),
            "research",
            "EagleLlamaForCausalLM",
            INPUT_OF_LAYER,
            "none",
            sources=(*SOURCES, "vllm 0.27.0 … 0.32.0 model_executor/models/llama_eagle.py (the EAGLE-1 rows)"),
        ),
        Layout(
            "eagle1-sglang",
            "SGLang LlamaForCausalLMEagle (--speculative-algorithm EAGLE): names unprefixed, fc with a bias, LlamaForCausalLMEagle",
            (),
            "research",
            "LlamaForCausalLMEagle",
            INPUT_OF_LAYER,
            "none",
            sources=(*SOURCES, "sglang srt/models/llama_eagle.py (the EAGLE-1 rows: engines/sglang.py EAGLE1_RANGES)"),
        ),
    )
}
# the engine each layout is checked on after writing (every modelled EAGLE-1 range of it, at its newest release read)
EAGLE1_ENGINE = {"eagle1-vllm": "vllm", "eagle1-sglang": "sglang"}
# the architectures convert reads: the Llama EAGLE-1 class under its research, vLLM and SGLang names
READ_ARCHS = (None, "LlamaForCausalLM", "EagleLlamaForCausalLM", "LlamaForCausalLMEagle")
KNOWN = re.compile(
    r"^(?:fc\.(?:weight|bias)|embed_tokens\.weight|lm_head\.weight|layers\.\d+\.(?:self_attn\.[qkvo]_proj\.(?:weight|bias)"
    r"|mlp\.(?:gate|up|down)_proj\.weight|(?:input|post_attention)_layernorm\.weight))$"
)


def convertible(cfg: dict, names) -> bool:
    """Whether convert reads this EAGLE-1/2 drafter: a Llama architecture name it knows and only Llama EAGLE-1 tensor
    names (bare or `model.`-prefixed). check offers `convert` as a fix only then, never a command that refuses."""
    archs = cfg.get("architectures")
    arch = archs[0] if isinstance(archs, list) and archs else None
    return arch in READ_ARCHS and all(KNOWN.match(n) or KNOWN.match(n.removeprefix("model.")) for n in names)


@record
class Zeros:
    """A tensor of zeros the destination needs (SGLang's fc.bias for a drafter trained without one)."""

    name: str
    dtype: str
    shape: tuple[int, ...]

    @property
    def nbytes(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n * DTYPE_BITS[self.dtype] // 8


def source_layout(ckpt) -> str:
    names = [n for n in ckpt.tensors if not n.startswith("lm_head")]
    return "eagle1 (model.-prefixed)" if names and all(n.startswith("model.") for n in names) else "eagle1-research"


def _row_and_class(engine: str, arch: str | None, layout: Layout | None):
    """(label "name==version" or None, the EAGLE-1 row, the class the destination is read by) for --engine
    NAME==VERSION, or for --to LAYOUT (its engine's newest modelled row)."""

    places, skipped = placements(engine, "eagle", "EAGLE-1/2", arch)
    pinned = "==" in engine
    if pinned and len(places) != 1:
        raise ConvertError(None, f"--engine {engine} names {len(places)} engine versions; convert writes for one (NAME==VERSION)")
    if not places:
        raise NotModelled(skipped[0] if skipped else f"no modelled EAGLE-1/2 class on {engine}")
    fp = places[0] if pinned else places[-1]
    label = f"{fp.era.engine}=={fp.version}"
    if fp.row is None or not fp.row.classes:
        if fp.row is not None and fp.row.unmodelled:
            raise NotModelled(f"{label}: {fp.row.unmodelled}")
        raise ConvertError(
            None, f"{label} has no EAGLE-1/2 drafter class (the first release with one is {fp.first}): no layout loads there"
        )

    for lay in [layout] if layout else EAGLE1_LAYOUTS.values():
        # the layout's architecture is its class's name: a release reads the layout when its dispatch builds that class from it
        if lay.architecture in fp.row.classes and family_builds(fp.row, lay.architecture) == lay.architecture:
            return (label if pinned else None), fp.row, fp.row.classes[lay.architecture], lay
    raise ConvertError(None, f"{label} reads no EAGLE-1 layout convert writes ({', '.join(EAGLE1_LAYOUTS)})")


def plan_eagle1(view, to: str | None, engine: str | None, target=None, embed: str = "keep"):
    """Every step of an EAGLE-1/2 conversion, decided before a byte is written (convert/common.py's Plan)."""

    src = view.ckpt
    if embed != "keep":
        raise ConvertRefused(None, "--embed applies to EAGLE-3 drafters; an EAGLE-1/2 drafter's embedding is carried as it is")
    if to is not None and to not in EAGLE1_LAYOUTS:
        if to in LAYOUTS or to in DFLASH_LAYOUTS:
            raise ConvertRefused(
                src.root,
                f"an EAGLE-1/2 drafter is not converted into the {to!r} layout: another architecture (its fc fuses the token "
                "embedding with one target feature, not target states of several layers); serve it as EAGLE (--to "
                f"{' or --to '.join(EAGLE1_LAYOUTS)}, or --engine NAME==VERSION)",
            )
        raise ConvertRefused(None, f"unknown layout {to!r}; an EAGLE-1/2 drafter converts to: {', '.join(EAGLE1_LAYOUTS)}")
    if to is None and engine is None:
        raise ConvertError(None, "say what to convert to: --to LAYOUT or --engine NAME==VERSION")
    cfg0 = src.config or {}
    archs = cfg0.get("architectures")
    arch = archs[0] if isinstance(archs, list) and archs else None
    if arch not in READ_ARCHS:
        raise ConvertRefused(
            None,
            f"architectures {archs}: convert reads the Llama EAGLE-1/2 drafter ({', '.join(a for a in READ_ARCHS if a)}); "
            "the other EAGLE-1 classes (DeepSeek, Mistral, MiniCPM, Llama-4, Cohere) have their own decoders",
        )
    lay = EAGLE1_LAYOUTS[to] if to else None
    label, row, cls, lay = _row_and_class(engine or EAGLE1_ENGINE[lay.name], lay.architecture if lay else arch, lay)
    plan = Plan(src, replace(view.drafter, layout=source_layout(src)), lay, label, [], {})
    plan.family = "eagle"
    where = label or f"every modelled {EAGLE1_ENGINE[lay.name]} release"
    params = {p.name for p in cls.params}
    keeps_head = "lm_head.weight" in params or any(st.op == "drop" and st.a == "lm_head" for st in cls.loader)
    _plan_tensors(plan, cls.name, where, keeps_head)
    ignores_bias = any(st.op == "ignore_suffix" and st.a == ".bias" for st in cls.loader)
    _plan_bias(plan, cls.name, where, "model.fc.bias" in params, ignores_bias)
    plan.config = copy.deepcopy(cfg0)
    if family_builds(row, arch) != cls.name:
        plan.config["architectures"] = [lay.architecture]
        plan.notes.append(f"architectures {archs} → [{lay.architecture!r}]: {where} builds {cls.name} from that name")
    if cfg0.get("tie_word_embeddings") and any(r.when == "tie" for r in cls.raises):
        plan.config["tie_word_embeddings"] = False
        plan.notes.append(
            f"tie_word_embeddings true → false: {cls.name} on {where} raises with it (the head would be the embedding module, "
            "which the worker cannot replace by the target's); the drafter has no head of its own"
        )
    if target is not None and target.vocab_size and cfg0.get("vocab_size") and target.vocab_size != cfg0.get("vocab_size"):
        raise ConvertError(
            target.path, f"target vocab {target.vocab_size} ≠ drafter vocab {cfg0.get('vocab_size')}: not trained for this target"
        )
    plan.noop = not (plan.renamed or plan.dropped or plan.added or plan.transformed) and plan.config == cfg0
    if plan.noop:
        plan.notes.append(f"nothing to change: the drafter is already in the layout {where} reads")
    return plan


def _plan_tensors(plan, cls_name: str, where: str, keeps_head: bool) -> None:

    src = plan.src
    strip = plan.drafter.layout == "eagle1 (model.-prefixed)"
    unknown = [n for n in src.tensors if not KNOWN.match(n.removeprefix("model.") if strip else n)]
    if unknown:
        raise ConvertError(
            src.root,
            f"{len(unknown)} tensor(s) are not part of a Llama EAGLE-1 drafter ({', '.join(unknown[:3])}); refusing to guess where they go",
        )
    for name, info in src.tensors.items():
        new = name.removeprefix("model.") if strip else name
        if new == "layers.0.input_layernorm.weight":
            plan.dropped.append((name, f"{cls_name} builds no input norm for layer 0 (an Identity, EAGLE's cnets.py)"))
            plan.warnings.append(
                f"{name} dropped: {cls_name} on {where} applies no input norm before layer 0, so the converted drafter runs "
                "without the one it was trained with; no layout makes the engine apply it (measure with `specbridge eval`)"
            )
            continue
        if new == "lm_head.weight" and not keeps_head:
            plan.dropped.append((name, f"{cls_name} has no head of its own and raises on the name; the target's head is used"))
            continue
        plan.tensors.append(OutTensor(new, info))
        (plan.renamed.append((name, new)) if new != name else plan.unchanged.append(new))


def _plan_bias(plan, cls_name: str, where: str, built: bool, ignored: bool = True) -> None:
    names = {t.name: t for t in plan.tensors}
    fc = names.get("fc.weight")
    if "fc.bias" in names and not built and not ignored:
        plan.tensors = [t for t in plan.tensors if t.name != "fc.bias"]
        plan.unchanged = [n for n in plan.unchanged if n != "fc.bias"]
        plan.dropped.append(("fc.bias", f"{cls_name} on {where} builds fc without a bias and raises on the name"))
        plan.warnings.append(
            f"fc.bias dropped: {cls_name} on {where} builds fc without a bias and its loader raises on the name, so the "
            "converted drafter runs without the trained bias; serve it where fc has a bias (SGLang's LlamaForCausalLMEagle), "
            "or retrain without one"
        )
    elif "fc.bias" in names and not built:
        plan.warnings.append(
            f"fc.bias is carried, but {cls_name} on {where} builds fc without a bias and ignores the name: no layout makes "
            "the trained bias load there, so the drafter runs without it (check's L013); serve it where fc has a bias "
            "(SGLang's LlamaForCausalLMEagle), or retrain without one"
        )
    if "fc.bias" not in names and built and fc is not None:
        plan.zeros.append(Zeros("fc.bias", fc.source.dtype, (fc.source.shape[0],)))
        plan.added.append(
            (
                "fc.bias",
                f"zeros {fc.source.dtype}[{fc.source.shape[0]}]: the drafter was trained without a bias; {cls_name} always "
                "builds one and would leave it at its random initialisation",
            )
        )
