"""vLLM's Medusa rows (method medusa): vllm/model_executor/models/medusa.py; RANGES, Medusa's release ranges."""

from __future__ import annotations

from ...record import replace
from ..spec import Buffer, Derive, Dispatch, DraftClass, Drop, FamilyRange, Field, LaunchCheck, Param, Raise, Rename, RenameRegex, Run
from .common import NOT_INITIALISED, REG, SPEC_PY

# --- Medusa (method medusa): vllm/model_executor/models/medusa.py -------------------------------------------------------
MED = "vllm/model_executor/models/medusa.py"
MEDUSA_MT = "vllm/transformers_utils/configs/medusa.py"
# medusa.py: byte-identical in the 0.12.0 … 0.20.0 and 0.24.0 wheels; 0.25.0 adds _remap_old_checkpoint_key (identical
# 0.25.0 … 0.29.0); 0.30.0 … 0.32.0 only retype the config access. 0.9.2 … 0.10.2 and 0.11.0 differ (not modelled).
MEDUSA_REMAP = (
    # FasterDecoding's medusa_lm_head layout: {head}.{layer}.linear.* and {head}.{N}.weight
    RenameRegex(r"^(\d+)\.(\d+)\.linear\.", r"blocks.\1.layers.\2.", cite=f"{MED} Medusa._remap_old_checkpoint_key @ 0.25.0 … 0.32.0"),
    RenameRegex(r"^(\d+)\.\d+\.(weight|bias)$", r"lm_heads.\1.\2", cite=f"{MED} Medusa._remap_old_checkpoint_key @ 0.25.0 … 0.32.0"),
)
# vocab: for method medusa, config/speculative.py sets the draft's vocab_size and truncated_vocab_size to the target's
# when vocab_size differs from it (old FasterDecoding configs have none: MedusaConfig's default is 32001); read in the
# 0.27.0, 0.29.0 and 0.32.0 wheels, in the block that injects model_type medusa (first in 0.25.0). `Vt` is the target's
# vocab (check --target), None without one.
MEDUSA_VOCAB = f"{SPEC_PY} @ 0.27.0, 0.29.0, 0.32.0 (method medusa: vocab_size and truncated_vocab_size aligned to the target's)"
# token_map: medusa.py keeps it only when truncated_vocab_size < vocab_size (token_map = nn.Parameter(w)); the heads'
# logits then land on token_map's ids. A head with more rows than token_map is gathered to them (w[token_map]).
MEDUSA_TOKEN_MAP = (
    Buffer(
        "token_map",
        into="token_map",
        why="the reduced draft vocabulary: each head's logits are scattered onto these target ids",
        cite=f"{MED} Medusa.load_weights (truncated_vocab_size < vocab_size)",
        when="reduced",
    ),
    Drop(
        "token_map",
        why="read only when truncated_vocab_size < vocab_size (the heads then score every token)",
        cite=f"{MED} Medusa.load_weights (if self.truncated_vocab_size < self.orig_vocab_size)",
        when="not reduced",
    ),
)
MEDUSA_RAISES = (
    Raise(
        "reduced and not has_token_map",
        "AssertionError at load: a truncated_vocab_size below vocab_size needs a token_map tensor in the checkpoint "
        "(medusa.py load_weights asserts truncated_vocab_size == orig_vocab_size or token_map is not None)",
        f"{MED} Medusa.load_weights @ 0.25.0 … 0.32.0",
    ),
    Raise(
        "reduced and has_token_map and not orig_head",
        "AssertionError at load: each lm_heads.N is built with vocab_size rows, but with a token_map its weight is "
        "gathered to the truncated_vocab_size mapped rows before loading (VocabParallelEmbedding.weight_loader asserts the rows equal "
        "vocab_size); a reduced vocabulary loads only with original_lm_head: true (one lm_head of truncated_vocab_size rows)",
        f"{MED} Medusa.load_weights (loaded_weight[self.token_map]); vllm/model_executor/layers/vocab_parallel_embedding.py "
        "weight_loader @ 0.32.0",
    ),
    Raise(
        "reduced and has_token_map and orig_head",
        "ValueError: Following weights were not initialized from checkpoint: {'token_map'} (load_weights makes token_map "
        "a parameter but does not return its name as loaded, and DefaultModelLoader's completeness check then names it): "
        "a reduced draft vocabulary does not load at all",
        f"{MED} Medusa.load_weights (self.token_map = nn.Parameter(...); loaded_params without it); "
        "vllm/model_executor/model_loader/default_loader.py track_weights_loading @ 0.27.0, 0.29.0, 0.32.0",
    ),
)
MEDUSA_CLASS = DraftClass(
    name="Medusa",
    file=f"{MED} @ 0.25.0 … 0.32.0",
    # MedusaConfig.from_pretrained renames any key with "num" and "heads" to num_heads, "num" and "layers" to
    # num_hidden_layers (medusa_num_heads, medusa_num_layers); vocab_size follows the target's (config/speculative.py)
    fields=(
        Field("H", ("hidden_size",), 4096),
        Field("V", ("vocab_size",), 32001),
        Field("L", ("medusa_num_heads", "num_heads"), 5),
        Field("nl", ("medusa_num_layers", "num_hidden_layers"), 1),
        Field("fc_bias", ("medusa_fc_bias",), False, kind="bool"),
        Field("orig_head", ("original_lm_head",), False, kind="bool"),
        Field("model_type", ("model_type",), None, kind="any"),
        Field("tv", ("truncated_vocab_size",), None),
    ),
    # {j} ranges over n_aux: here the residual layers of each head
    derive=(
        Derive("n_aux", "nl"),
        Derive("Vm", "Vt if Vt is not None else V"),  # MEDUSA_VOCAB
        # a reduced vocabulary only where vocab_size is the target's (else both sizes become the target's)
        Derive("reduced", "tv is not None and tv < V and (Vt is None or Vt == V)"),
    ),
    params=(
        # ResidualBlock: nn.Linear(H, H, bias=getattr(config, "medusa_fc_bias", False))
        # plain nn.Linear (no quantization method): DefaultModelLoader names them when nothing filled them; the
        # ParallelLMHead heads are exempt (a quantization method with process_weights_after_loading): left random
        Param("blocks.{i}.layers.{j}.weight", ("H", "H"), per_layer=True, role="medusa block", plain=True),
        Param("blocks.{i}.layers.{j}.bias", ("H",), when="fc_bias", per_layer=True, role="medusa block", plain=True),
        Param("lm_heads.{i}.weight", ("Vm", "H"), when="not orig_head", per_layer=True, role="head"),
        # original_lm_head: ParallelLMHead(truncated_vocab_size); a head of Vm rows is gathered to the token_map rows
        Param("lm_head.weight", ("Vm", "H"), when="orig_head", role="head"),
    ),
    loader=(Rename(old="medusa_heads.", new="", cite=f"{MED} Medusa.load_weights"),)
    + MEDUSA_REMAP
    + MEDUSA_TOKEN_MAP
    + (RenameRegex(r"^lm_heads\.0\.weight$", "lm_head.weight", when="orig_head", cite=f"{MED} load_weights (original_lm_head)"),),
    unknown="skip",
    unknown_message="{name}: no Medusa parameter of that name; skipped (load_weights keeps only names in params_dict)",
    missing="silent",
    raises=MEDUSA_RAISES,
    unfilled_when="True",
    unfilled_message=NOT_INITIALISED,
    methods=("MEDUSA",),
    launch_checks=(
        LaunchCheck(
            "steps is None",
            "error",
            "ValueError: A speculative model was provided, but `num_speculative_tokens` was not provided (a Medusa config "
            "has no n_predict to default it from)",
            f"{SPEC_PY} @ 0.32.0 (__post_init__)",
            code="H001",
        ),
        LaunchCheck(
            "steps is not None and steps > L",
            "error",
            "num_speculative_tokens {steps} builds {steps} Medusa heads (vLLM sets num_heads from it), the config names "
            "{L}: the blocks of the heads past the {L} trained ones have no tensors, and the load raises ValueError: "
            "Following weights were not initialized from checkpoint: {{blocks.{L}.layers.0.weight, …}}",
            f"{MEDUSA_MT} (num_lookahead_tokens setter: num_heads); {SPEC_PY} @ 0.32.0 (num_lookahead_tokens = "
            "num_speculative_tokens); vllm/model_executor/model_loader/default_loader.py track_weights_loading",
            code="H001",
        ),
        LaunchCheck(
            "steps is not None and steps < L",
            "warning",
            "num_speculative_tokens {steps} builds {steps} of the {L} trained Medusa heads (vLLM sets num_heads from it): "
            "the other heads' tensors are skipped and each step accepts at most {steps} + 1 tokens",
            f"{MEDUSA_MT} (num_lookahead_tokens setter: num_heads); {MED} load_weights (names outside params_dict skipped)",
            code="H001",
        ),
    ),
    notes=(
        "a name the loader does not know is skipped without a word (medusa_head.N.* is not medusa_heads.N.*): the blocks it "
        "leaves unfilled raise at the completeness check",
        "trained biases load only with medusa_fc_bias: true in the config (ResidualBlock builds nn.Linear(bias=medusa_fc_bias))",
        f"heads: vLLM sets num_heads from num_speculative_tokens ({MEDUSA_MT} num_lookahead_tokens setter; "
        "vllm/config/speculative.py): simulated with medusa_num_heads; --launch compares the two (H001)",
        "a missing head block raises (DefaultModelLoader names the plain nn.Linear blocks); a missing lm_heads.N stays random",
        f"vocab: {MEDUSA_VOCAB}; with --target the heads are sized by the target's vocab",
        "original_lm_head with token_map: a head already cut to truncated_vocab_size rows loads (it is not gathered); "
        "simulated with vocab_size rows",
    ),
)
# 0.12.0 … 0.24.0: no _remap_old_checkpoint_key (the old numeric names match nothing and are skipped) and no model_type
# injection for method medusa (config/speculative.py injects {"model_type": "medusa"} from 0.25.0)
MEDUSA_12 = replace(
    MEDUSA_CLASS,
    file=f"{MED} @ 0.12.0 … 0.24.0",
    loader=tuple(st for st in MEDUSA_CLASS.loader if st not in MEDUSA_REMAP),
    # no vocab alignment to the target before the 0.25.0 block that injects model_type medusa (MEDUSA_VOCAB)
    derive=(Derive("n_aux", "nl"), Derive("Vm", "V"), Derive("reduced", "tv is not None and tv < V")),
    raises=MEDUSA_RAISES
    + (
        Raise(
            "model_type != 'medusa'",
            "the draft config is not read as a MedusaConfig: vLLM before 0.25.0 does not inject model_type 'medusa' for "
            "method medusa (vllm/config/speculative.py draft_hf_overrides, first in the 0.25.0 wheel); write "
            '"model_type": "medusa" and "architectures": ["MedusaModel"]',
            f"{SPEC_PY} @ 0.20.0, 0.24.0 (no injection), 0.25.0 (injection)",
        ),
    ),
)
MEDUSA_DISPATCH = Dispatch(
    "vllm",
    {"*": "Medusa"},
    "Medusa",
    cite=f"{REG} @ 0.9.2 … 0.32.0 (MedusaModel → medusa.Medusa; method medusa builds it whatever the name)",
)
RANGES: tuple[FamilyRange, ...] = (
    FamilyRange(
        engine="vllm",
        family="medusa",
        first="0.9.2",
        last="0.11",
        dispatch=MEDUSA_DISPATCH,
        classes={},
        begins=f"{REG}: MedusaModel registered in every wheel read (0.9.2, 0.10.0, 0.10.2, 0.11.0)",
        versions_read=("0.9.2", "0.10.0", "0.10.2", "0.11.0"),
        unmodelled=f"{MED} of vLLM 0.9.2 … 0.11.0 differs from 0.12.0's (read, not modelled); specbridge models Medusa from 0.12.0",
    ),
    FamilyRange(
        engine="vllm",
        family="medusa",
        first="0.12.0",
        last="0.24",
        dispatch=MEDUSA_DISPATCH,
        classes={"Medusa": MEDUSA_12},
        begins=f"{MED} is byte-identical in the 0.12.0 … 0.20.0 and 0.24.0 wheels (0.11.0 differs; 0.21–0.23 not read)",
        versions_read=("0.12.0", "0.13.0", "0.14.0", "0.15.0", "0.16.0", "0.17.0", "0.18.0", "0.19.0", "0.20.0", "0.24.0"),
    ),
    FamilyRange(
        engine="vllm",
        family="medusa",
        first="0.25.0",
        last=None,
        dispatch=replace(
            MEDUSA_DISPATCH,
            cite=f"{REG} @ 0.25.0 … 0.32.0 (MedusaModel → medusa.Medusa); {SPEC_PY} (model_type medusa injected for "
            "method medusa: old checkpoints have no model_type)",
        ),
        classes={"Medusa": MEDUSA_CLASS},
        # 9 of 11 agree; the 2 head-count cases are strict xfails (H001 says them from --launch)
        runs=tuple(
            Run(release=r, date="2026-12-02", test="tests/test_conformance_vllm_medusa.py", cases=11, agreed=9)
            for r in ("0.27.0", "0.29.0", "0.32.0")
        ),
        begins=f"{MED} loads FasterDecoding's old key layout (_remap_old_checkpoint_key): first in the 0.25.0 wheel, absent "
        "from 0.24.0 (identical 0.25.0 … 0.29.0; 0.30.0 only retypes the config access)",
        versions_read=("0.25.0", "0.26.0", "0.27.0", "0.28.0", "0.29.0", "0.30.0", "0.31.0", "0.32.0"),
    ),
)
