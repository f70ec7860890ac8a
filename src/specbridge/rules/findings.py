"""Findings: a stable code, a severity, one plain sentence, and the fix (ruff-style)."""

from __future__ import annotations

from dataclasses import asdict, dataclass

ERROR, WARNING, INFO = "error", "warning", "info"


@dataclass(frozen=True)
class Rule:
    code: str
    title: str
    failure_modes: tuple[int, ...] = ()  # rows of docs/failure-modes.md


@dataclass
class Finding:
    code: str
    severity: str
    message: str
    fix: str | None = None

    def to_json(self) -> dict:
        return {**asdict(self), "doc": doc_link(self.code)}


def doc_link(code: str) -> str:
    """Where a finding's rule is explained (its section in the repository's docs/rules.md)."""
    return f"docs/rules.md#{code.lower()}"


# The catalogue. docs/rules.md documents each code; tests/test_rules_catalogue.py keeps them in sync.
RULES: dict[str, Rule] = {
    r.code: r
    for r in [
        Rule("L001", "checkpoint tensors the engine silently drops", (1, 8, 38)),
        Rule("L002", "engine parameters nothing fills (left at random init)", (1, 2, 9)),
        Rule("L003", "tensor shape differs from the engine's parameter", (5, 6)),
        Rule("L004", "engine raises on checkpoint tensor names", (8, 38)),
        Rule("L005", "engine version cannot dispatch this config", (8,)),
        Rule("L006", "engine raises while building the drafter from this config", (7, 8)),
        Rule("L007", "checkpoint tensor replaced by the target's after loading", (3, 4)),
        Rule("L008", "checkpoint tensors the engine ignores by design", (13,)),
        Rule("L009", "embedding or head taken from the target", (2, 4)),
        Rule("L010", "head borrowed from the target while the draft vocab is reduced", (2, 9)),
        Rule("L011", "parameter left at an initial value that is right for this config", (9, 13)),
        Rule("L012", "tensor silently cut or zero-padded to the engine's shape", (5, 6)),
        Rule("G001", "fc input width is not a multiple of the target hidden size", (5, 15, 20)),
        Rule("G002", "fc output width differs from the draft hidden size", (5,)),
        Rule("G003", "first-layer q/k/v input is not 2 x hidden", (6,)),
        Rule("G004", "attention projections disagree with heads x head_dim", (6,)),
        Rule("G005", "lm_head rows differ from draft_vocab_size", (9, 25)),
        Rule("G006", "decoder layers in the keys differ from num_hidden_layers", (7,)),
        Rule("G007", "draft and target hidden sizes differ without target_hidden_size", (5,)),
        Rule("G008", "aux layer id count differs from the fc width", (20,)),
        Rule("G009", "draft KV-cache geometry differs from the target's"),
        Rule("V001", "d2t is not an int64 offset table", (10,)),
        Rule("V002", "d2t length differs from the draft vocab", (10,)),
        Rule("V003", "d2t maps outside the target vocab", (10,)),
        Rule("V004", "d2t is not one-to-one / not sorted", (10,)),
        Rule("V005", "t2d disagrees with d2t", (10,)),
        Rule("V006", "reduced draft vocab without d2t", (9,)),
        Rule("V007", "full-vocab drafter ships d2t/t2d", (13,)),
        Rule("V008", "d2t holds absolute ids (d2t == arange)", (10,)),
        Rule("V009", "drafter vocab differs from the target's", (14,)),
        Rule("V010", "drafter tokenizer differs from the target's", (14,)),
        Rule("V011", "vocab map differs from the parent checkpoint's", (11,)),
        Rule("A001", "target cannot capture aux hidden states on this engine version", (16,)),
        Rule("A002", "aux layers fed differ from the layers trained on", (17, 18)),
        Rule("A003", "number of captured aux states differs from fc", (19, 20)),
        Rule("A004", "EAGLE-3 drafter launched without the EAGLE3 algorithm", (15,)),
        Rule("A005", "aux layer ids outside the target's layers", (19,)),
        Rule("A006", "aux layers resolved and in agreement", (17,)),
        Rule("E001", "tie_word_embeddings inconsistent with the head", (25,)),
        Rule("E002", "embedding looks freshly initialised", (3,)),
        Rule("E003", "embedding differs from the target's", (3, 4)),
        Rule("C001", "draft context shorter than the served context", (23,)),
        Rule("C002", "RoPE settings differ from the target's", (22,)),
        Rule("C003", "fp16 drafter with a bf16 target", (28,)),
        Rule("C004", "quantized target, unquantized drafter", (26,)),
        Rule("C005", "rotated target", (27,)),
        Rule("C006", "draft path missing or equal to the target", (37,)),
        Rule("C007", "draft sliding window the engine ignores", (24,)),
        Rule("C008", "launch flags the engine adjusts or rejects", (30,)),
        Rule("C009", "draft tensor parallelism ignored", (29,)),
        Rule("C010", "fc.bias without the bias flag", (38,)),
        Rule("C011", "architecture variant flag the engine version does not read", (21,)),
        Rule("R001", "engine version newer than the newest release modelled", ()),
        Rule("R002", "engine version not given: the newest modelled release assumed", ()),
        Rule("R003", "pre-release placed with the release it precedes", ()),
    ]
}


def finding(code: str, severity: str, message: str, fix: str | None = None) -> Finding:
    assert code in RULES, code
    return Finding(code, severity, message, fix)
