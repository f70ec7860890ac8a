"""Drafter families as data: the names engines register for each, the config keys and tensor shapes only
that family writes, and whether specbridge models it yet.

Read before any layout is guessed (families/detect.py): a checkpoint is checked as the family its evidence
shows, or refused with what was seen. A family specbridge does not model is refused, never simulated as
EAGLE-3: a false error whose fix is a `convert` to EAGLE-3 is as harmful as a false OK.

A row is also the family's one interface to the commands: which commands read it (`reads`), which path check
takes (`checker`), how eval drafts it (`eval_view`), the module that describes it (`geometry`) and states its target
fit (`target_fit`), its convert planner, the fix a load error names. cli/, convert/, eval/ and rules/ ask the row,
never the name (tests/test_family_interface.py), so a new family is one row (and its module), and every command
answers it or refuses it in one line (tests/test_family_matrix.py).
"""

from __future__ import annotations

from ..record import record

VLLM_REG = "vllm/model_executor/models/registry.py @ 0.32.0 (speculative decoding section)"
VLLM_METHOD = "vllm/config/speculative.py @ 0.32.0 (method inference from the draft path and architectures)"
SPEC_ALGOS = "vllm/transformers_utils/configs/speculators/algos.py @ 0.32.0 (register_speculator)"


@record
class Family:
    """One drafter family.

    `architectures`: config `architectures[0]` names that say this family (the engines' registries);
    `arch_words`: lower-case substrings of an architecture name that say it (`eagle3` in
    `Eagle3Qwen3ForCausalLM`); `config_keys`: top-level config keys only this family writes;
    `speculators_types`: `speculators_model_type` values; `path_words`: the words vLLM infers the method from
    in the draft's path (weak evidence); `modelled`: whether check/convert/eval read it yet."""

    name: str
    title: str
    architectures: tuple[str, ...] = ()
    arch_words: tuple[str, ...] = ()
    config_keys: tuple[str, ...] = ()
    speculators_types: tuple[str, ...] = ()
    path_words: tuple[str, ...] = ()
    modelled: bool = False
    method: str = ""  # vLLM's speculative method for it
    cite: str = VLLM_REG
    # the family it builds on (DFlash2 and DSpark are DFlash plus a head): the parent's structural evidence is
    # theirs too once their own evidence is there
    extends: str = ""
    # the module under specbridge.families whose `geometry(ckpt)` describes a drafter of this family as itself
    # (inspect); "" = the family is described by the EAGLE-3 canonical description (layouts/canonical.py)
    geometry: str = ""
    # the module under specbridge.families whose `target_fit(ckpt)` states the width of the target hidden states the
    # drafter takes (families/fit.py, the F rules); "" = the family reads none, or is EAGLE-3 (its G rules say it)
    target_fit: str = ""
    # --- what each command does for the family: the commands branch on these fields, never on a family's name
    # the commands that read a drafter of this family from its own files (inspect, check, launch, convert, eval);
    # cli/guards.py refuse_non_drafter refuses the others in one line naming the families the command reads
    reads: tuple[str, ...] = ()
    # how check reads it: "eras" (the engines' EAGLE-3 loader eras, rules/check.py check), "ranges" (each engine's
    # FAMILY_RANGES rows, rules/check.py check_family), "head" (an MTP head inside a target, read from the target's
    # index: cli/mtp_check.py), "draft_model" (a whole causal LM served as a draft model: cli/draft_check.py)
    checker: str = "ranges"
    # the drafted shape `launch` and `sweep` try: a tree (topk > 1, draft-token budgets) or a chain / block only
    tree: bool = False
    # how eval drafts it: "tree" (EAGLE-3: a chain or tree of k steps), "parallel" (P-EAGLE: the k tokens in one
    # parallel pass over a mask token), "eagle1" (EAGLE-1/2: a chain fed the target's last hidden state), "block"
    # (DFlash: a block over a mask token); "" = eval does not draft it
    eval_view: str = ""
    # DSpark: the block predicts from the anchor (k defaults to block_size, not block_size - 1; dspark_block_size)
    block_from_anchor: bool = False
    # the draft step depends on the engine's model runner (DFlash2's candidate selector, DSpark's Markov walk)
    runner_dependent: bool = False
    # the decoder is EAGLE-3's: one fc over the target's aux hidden states (rules/family.py other_fc reads its width)
    fc_over_aux: bool = False
    # every head is trained on its own (Medusa): the target's lm_head is not one of them (rules/load.py)
    per_head: bool = False
    # the fix a load error names (rules/context.py convert_fix): "convert" (convert writes the layout the class
    # reads), "convert_eagle1" (when convert writes the dispatched class's EAGLE-1 layout), "rename_heads" (Medusa:
    # config keys and tensor names), "serve_original" (an MTP head: the publisher's files), "rename" (the tables)
    fix: str = "rename"
    # "module:function" under specbridge.convert that plans converting it, for a family convert reads with its own
    # planner; "" = the EAGLE-3 planner (convert/plan.py)
    convert_planner: str = ""
    # the engines whose own loader `verify` runs on it (conformance/verify.py's harness builds the class there), and
    # why an engine outside them builds none, in (engine, reason) rows
    verified_on: tuple[str, ...] = ()
    not_built: tuple[tuple[str, str], ...] = ()
    # the architecture of the target stand-in `verify` derives from the drafter's config when no --target is given
    # (DFlash drafters are trained on Qwen3 targets)
    stand_in_target: str = "LlamaForCausalLM"
    # config keys, first present wins, whose value is the draft steps an engine builds for it when no launch row says
    # (Medusa: one step per head)
    steps_keys: tuple[str, ...] = ()

    @property
    def short(self) -> str:
        """The title without its parenthesis ("plain causal LM"), for a sentence that names two families."""
        return self.title.split(" (")[0]

    def describe(self, ckpt) -> dict | None:
        """The drafter's own geometry (inspect), from the family's module; None when the family has none."""
        if not self.geometry:
            return None
        from importlib import import_module

        return import_module(f"specbridge.families.{self.geometry}").geometry(ckpt)

    def convert_plan(self):
        """The family's own convert planner (`convert_planner`, imported when asked), or None for EAGLE-3's."""
        if not self.convert_planner:
            return None
        from importlib import import_module

        module, function = self.convert_planner.split(":")
        return getattr(import_module(f"specbridge.convert.{module}"), function)


FAMILIES: tuple[Family, ...] = (
    Family(
        "eagle3",
        "EAGLE-3",
        architectures=(
            "LlamaForCausalLMEagle3",
            "Eagle3LlamaForCausalLM",
            "Eagle3Speculator",
            "LlamaEagle3DraftModel",
            "Eagle3Qwen3ForCausalLM",
            "Eagle3DeepseekV2ForCausalLM",
            "Eagle3DeepseekV3ForCausalLM",
            "Eagle3MiniMaxM2ForCausalLM",
            "Eagle3Qwen2_5vlForCausalLM",
            "Eagle3Qwen3vlForCausalLM",
        ),
        arch_words=("eagle3",),
        speculators_types=("eagle3",),
        path_words=("eagle3",),
        modelled=True,
        method="eagle3",
        reads=("inspect", "check", "launch", "convert", "eval"),
        checker="eras",
        tree=True,
        eval_view="tree",
        fc_over_aux=True,
        fix="convert",
        verified_on=("vllm", "sglang"),
    ),
    Family(
        "peagle",
        "P-EAGLE",
        # EAGLE-3 with parallel drafting: vLLM routes these to llama_eagle3 / qwen3_eagle3 and fills a mask_hidden
        # buffer; a speculators config says speculators_model_type "peagle" (translated to method eagle3 +
        # parallel_drafting). Its EAGLE-3 structure is its own once a name says P-EAGLE.
        architectures=("PEagleDraftModel", "PeagleLlamaForCausalLM", "PeagleQwen3ForCausalLM"),
        arch_words=("peagle",),
        speculators_types=("peagle",),
        modelled=True,
        method="eagle3",
        cite=f"{VLLM_REG}; {SPEC_ALGOS} (update_peagle); vllm/transformers_utils/configs/speculators/base.py @ 0.32.0",
        extends="eagle3",
        reads=("inspect", "check", "launch", "eval"),
        eval_view="parallel",
        fc_over_aux=True,
        verified_on=("vllm",),
        not_built=(("sglang", "P-EAGLE (parallel drafting) is a vLLM method; SGLang builds no P-EAGLE drafter"),),
    ),
    Family(
        "dflash",
        "DFlash",
        geometry="dflash",
        target_fit="dflash",
        architectures=("DFlashDraftModel", "DFlashLagunaForCausalLM", "MuseGlimmerAssistantModel", "DFlashMuseGlimmerAssistantModel"),
        arch_words=("dflash",),
        config_keys=("dflash_config",),
        speculators_types=("dflash",),
        path_words=("dflash",),
        modelled=True,
        method="dflash",
        reads=("inspect", "check", "launch", "convert", "eval"),
        eval_view="block",
        convert_planner="dflash:plan_dflash",
        verified_on=("vllm", "sglang"),
        stand_in_target="Qwen3ForCausalLM",
    ),
    Family(
        "dflash2",
        "DFlash2",
        geometry="dflash",
        target_fit="dflash",
        architectures=("DFlash2DraftModel",),
        arch_words=("dflash2",),
        speculators_types=("dflash2",),
        modelled=True,  # vLLM rows: engines/vllm/dflash2.py (DFlash2Qwen3ForCausalLM, 0.28.0+)
        method="dflash",
        cite=f"{VLLM_REG}; vllm/model_executor/models/qwen3_dflash2.py @ 0.29.0–0.32.0 (candidate_selector)",
        extends="dflash",
        reads=("inspect", "check", "launch", "eval"),
        eval_view="block",
        runner_dependent=True,
        verified_on=("vllm", "sglang"),
        stand_in_target="Qwen3ForCausalLM",
    ),
    Family(
        "dspark",
        "DSpark",
        geometry="dflash",
        target_fit="dflash",
        architectures=(
            "Qwen3DSparkModel",
            "Qwen3OmniDSparkModel",
            "Gemma4DSparkModel",
            "DSparkDraftModel",
            "DSparkV41DraftModel",
            "K3DSparkModel",
        ),
        arch_words=("dspark",),
        config_keys=("dspark_target_layer_ids", "dspark_block_size", "dspark_noise_token_id"),
        speculators_types=("dspark",),
        path_words=("dspark",),
        modelled=True,  # vLLM rows: engines/vllm/dspark.py (Qwen3DSparkForCausalLM, 0.30.0+)
        method="dspark",
        cite=f"{VLLM_REG}; {SPEC_ALGOS} (update_dspark: 'DSpark extends DFlash')",
        extends="dflash",
        reads=("inspect", "check", "launch", "eval"),
        eval_view="block",
        block_from_anchor=True,
        runner_dependent=True,
        verified_on=("vllm", "sglang"),
        stand_in_target="Qwen3ForCausalLM",
    ),
    Family(
        "eagle",
        "EAGLE-1/2",
        geometry="eagle",
        target_fit="eagle",
        architectures=(
            "EagleLlamaForCausalLM",
            "EagleDeepSeekMTPModel",
            "EagleMistralForCausalLM",
            "EagleMistralLarge3ForCausalLM",
            "EagleMiniCPMForCausalLM",
            "EagleLlama4ForCausalLM",
            "EagleCohereForCausalLM",
            "Eagle2_5_VLForCausalLM",
            # SGLang's names (sglang/srt/models/mistral_eagle.py, mistral_large_3_eagle.py @ 0.5.11)
            "MistralForCausalLMEagle",
            "MistralLarge3ForCausalLMEagle",
        ),
        speculators_types=("eagle",),
        path_words=("eagle-",),
        modelled=True,
        method="eagle",
        reads=("inspect", "check", "launch", "convert", "eval"),
        eval_view="eagle1",
        fix="convert_eagle1",
        convert_planner="eagle1:plan_eagle1",
        verified_on=("vllm", "sglang"),
    ),
    Family(
        "medusa",
        "Medusa",
        geometry="medusa",
        target_fit="medusa",
        architectures=("MedusaModel",),
        config_keys=("medusa_num_heads", "medusa_num_layers"),
        modelled=True,  # vLLM rows: engines/vllm/medusa.py (medusa.py Medusa, 0.27.0+)
        method="medusa",
        reads=("inspect", "check"),
        per_head=True,
        fix="rename_heads",
        steps_keys=("medusa_num_heads", "num_heads"),
        verified_on=("vllm",),
        not_built=(
            ("sglang", "SGLang has no Medusa drafter class (its speculative algorithms are EAGLE, EAGLE3, NEXTN, STANDALONE, DFLASH)"),
        ),
    ),
    Family("mlp_speculator", "MLP speculator", architectures=("MLPSpeculatorPreTrainedModel",), method="mlp_speculator"),
    Family(
        "mtp",
        "MTP / NextN head inside a target",
        target_fit="mtp",
        arch_words=("mtp",),
        config_keys=("num_nextn_predict_layers", "mtp_num_hidden_layers", "num_mtp_layers"),
        modelled=True,  # check / inspect / launch read the head from the target's index (families/mtp.py)
        method="mtp",
        checker="head",
        fix="serve_original",
        verified_on=("vllm", "sglang"),
    ),
    Family(
        "causal_lm",
        "plain causal LM (a target, or a draft model for method draft_model)",
        method="draft_model",
        checker="draft_model",
        verified_on=("vllm", "sglang"),
    ),
)

BY_NAME = {f.name: f for f in FAMILIES}


def readers(command: str) -> tuple[str, ...]:
    """The families whose own files `command` reads (each row's `reads`), in the table's order."""
    return tuple(f.name for f in FAMILIES if command in f.reads)
