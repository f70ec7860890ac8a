"""vLLM's MLP speculator rows: vllm/model_executor/models/mlp_speculator.py still ships, its registry entry does
not; RANGES, its release range.
"""

from __future__ import annotations

from ..spec import Derive, Dispatch, DraftClass, FamilyRange, Field, Param, Rename
from .common import REG

# --- MLP speculator: vllm/model_executor/models/mlp_speculator.py still ships, its registry entry does not -------------
MLPS = "vllm/model_executor/models/mlp_speculator.py"
MLP_OFF = (
    "ValueError: Model architectures {archs} are not supported: vLLM comments MLPSpeculatorPreTrainedModel out of its "
    "registry from 0.10.0 ('Re-enable this once the MLP Speculator is supported in V1'; registered in 0.9.2, the last "
    "release that loads an MLP speculator)"
)
MLP_SPECULATOR_CLASS = DraftClass(
    name="MLPSpeculator",
    file=f"{MLPS} @ 0.32.0 (not registered)",
    fields=(
        Field("V", ("vocab_size",)),
        Field("L", ("n_predict",), 1),
        Field("emb", ("emb_dim",), 4096),
        Field("inner_raw", ("inner_dim",), 0),
        Field("tie", ("tie_weights",), False, kind="bool"),
        Field("scale_input", ("scale_input",), False, kind="bool"),
    ),
    derive=(Derive("inner", "inner_raw if inner_raw else emb"),),
    params=(
        Param("emb.{i}.weight", ("V", "inner"), per_layer=True, role="embed"),
        Param("proj.{i}.weight", ("inner", "emb if i == 0 else inner"), per_layer=True, role="projection"),
        Param("head.{i}.weight", ("V", "inner"), per_layer=True, role="head"),
        Param("ln.{i}.weight", ("inner",), per_layer=True, role="norm"),
        Param("ln.{i}.bias", ("inner",), per_layer=True, role="norm"),
    ),
    loader=(Rename(old="speculator.", new="", cite=f"{MLPS} MLPSpeculator.load_weights"),),
    unknown="skip",
    unknown_message="{name}: not a parameter; skipped (params_dict.get(name) is None)",
    missing="silent",
    methods=("MLP_SPECULATOR",),
)
RANGES: tuple[FamilyRange, ...] = (
    FamilyRange(
        engine="vllm",
        family="mlp_speculator",
        first="0.10.0",
        last=None,
        dispatch=Dispatch("vllm", {}, "MLPSpeculator", cite=f"{REG} @ 0.10.0 … 0.32.0 (entry commented out)", unknown_message=MLP_OFF),
        classes={"MLPSpeculator": MLP_SPECULATOR_CLASS},
        begins=f"{REG}: 'MLPSpeculatorPreTrainedModel' is registered in the 0.9.0.1 and 0.9.2 wheels and commented out from "
        "the 0.10.0 wheel on (0.10.0, 0.10.2, 0.11.0, 0.27.0 … 0.32.0 read); the class file still ships",
        versions_read=("0.10.0", "0.10.2", "0.11.0", "0.27.0", "0.29.0", "0.30.0", "0.31.0", "0.32.0"),
    ),
)
