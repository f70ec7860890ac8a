"""Name a checkpoint's drafter family from its config and tensor headers, with the evidence, before any layout
is guessed. Every witness votes: the config's architecture name and speculators type (strong), keys only one
family writes (medium), tensor structure (medium); words in the path that vLLM infers a method from (weak) only
when the files say nothing.
The family with the most weight wins, unless a second family has more than a path word behind it: then the
witnesses disagree and the verdict is "ambiguous", naming both; nothing at all is "unknown". Nothing here reads tensor data."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..later import Later
from ..record import field, record
from .medusa import heads as medusa_heads
from .mtp import announced_layers
from .names import lines_with, name_lines
from .not_drafter import what_it_is
from .table import BY_NAME, FAMILIES, Family

STRONG, MEDIUM, WEAK = 3, 2, 1
# over name_lines(): a name is a line; "model." is optional
# a line and every next line with the same layer prefix: one match per run of a layer's names (they come grouped)
LAYER_RUN = Later(r"\n((?:model\.)?(?:layers\.(\d+)|midlayer)\.)[^\n]*(?:\n\1[^\n]*)*")
# any name a drafter head's vote looks at (most targets have none, and one scan says so)
DRAFTER_HEADS = Later(r"\n(?:model\.)?(?:candidate_selector|medusa_heads?|blocks|lm_heads|emb|proj|head|ln|\d+)\.")
LAYER_HIDDEN_NORM = Later(r"\n(?:model\.)?(?:layers\.\d+|midlayer)\.hidden_norm\.weight\n")
# a name that may be part of a Medusa head (its whole structure is medusa.heads: a block and a vocab head per number)
MEDUSA = Later(r"\n(?:model\.)?(?:medusa_heads?\.|blocks\.\d+\.layers\.|lm_heads\.|\d+\.\d+\.)")
# an MLP speculator's whole structure: per predicted token an embedding, a projection and a head (mlp_speculator.py)
MLP_PARTS = tuple(Later(rf"\n(?:model\.)?{part}\.\d+\.weight\n") for part in ("emb", "proj", "head"))
MEDUSA_WORDS = {
    "fasterdecoding": "N.M.linear.* + N.L.weight",
    "medusa_head": "medusa_head.N.M.linear.* + medusa_head.N.L.weight",
    "blocks": "blocks.N.layers.M.* + lm_heads.N",
}
MTP_NEEDLES = (".eh_proj.weight\n", ".enorm.weight\n", ".hnorm.weight\n", "mtp")  # lines to test exactly (4 scans, not 7)


@record(frozen=False)
class FamilyVerdict:
    """The family a checkpoint's evidence shows (None: unknown or ambiguous), every witness, and the
    candidates when two families are equally supported."""

    family: Family | None
    evidence: list[str] = field(default_factory=list)
    candidates: list[str] = field(default_factory=list)
    seen: str = ""  # one line: what was seen, for a refusal
    not_drafter: str = ""  # what a checkpoint that is no drafter is (families/not_drafter.py), for its refusal
    # the architecture names one family and the tensors' whole structure another: the engines build the named family's
    # class (they dispatch on the name), so `family` is that one, and this is the disagreeing evidence (rule L017)
    mislabel: Mislabel | None = None

    @property
    def name(self) -> str:
        return self.family.name if self.family else ("ambiguous" if self.candidates else "unknown")

    def to_json(self) -> dict:
        out = {
            "name": self.name,
            "title": self.family.title if self.family else None,
            "evidence": self.evidence,
            "candidates": self.candidates,
        }
        if self.mislabel is not None:
            out["mislabel"] = self.mislabel.to_json()
        return out


@record
class Mislabel:
    """A checkpoint whose config names one family's architecture (`named`, what the engines dispatch on) over another
    family's tensors (`shown`, with the structural evidence that says so)."""

    named: str  # the family the architecture name belongs to (the class the engines build)
    arch: str  # architectures[0]
    shown: str  # the family the tensors' structure (and config keys) show
    evidence: tuple[str, ...]

    def to_json(self) -> dict:
        return {"architecture": self.arch, "named": self.named, "tensors_show": self.shown, "evidence": list(self.evidence)}

    def line(self) -> str:
        """What inspect says: the name engines dispatch on, and what the tensors are."""
        named, shown = BY_NAME[self.named].short, BY_NAME[self.shown].short
        return (
            f"architectures[0] {self.arch!r} names the {named} family, but the tensors are {shown} tensors "
            f"({'; '.join(self.evidence)}): engines build the {named} class they dispatch on the name "
            "(specbridge check says what each release does, L017)"
        )


def _shape(shapes: Mapping[str, Sequence[int]], *names: str) -> tuple | None:
    for n in names:
        for cand in (n, "model." + n):
            if cand in shapes:
                return tuple(shapes[cand])
    return None


def _strip(name: str) -> str:
    return name[6:] if name.startswith("model.") else name


def _has(shapes: Mapping[str, Sequence[int]], name: str) -> bool:
    return name in shapes or "model." + name in shapes


def structure_votes(shapes: Mapping[str, Sequence[int]]) -> list[tuple[str, int, str]]:
    """(family, weight, why) from the tensor names and shapes alone. Names are read with or without "model.",
    by scans of the names as one text (names.py): a target's index has ~100 k of them."""
    text = name_lines(shapes)
    odd = "\0" in text  # a name with a NUL or newline (never in a real checkpoint): the names themselves where they are shown
    votes: list[tuple[str, int, str]] = []
    fc = _shape(shapes, "fc.weight", "eagle_linear.weight")  # eagle_linear: Mistral-format EAGLE (mistral_eagle.py)
    q0 = _shape(shapes, "layers.0.self_attn.q_proj.weight", "midlayer.self_attn.q_proj.weight")
    layer_hidden_norm = ".hidden_norm.weight\n" in text and LAYER_HIDDEN_NORM.search(text) is not None
    top_hidden_norm = _has(shapes, "hidden_norm.weight")
    layers = {m[2] or "0" for m in LAYER_RUN.finditer(text)}
    heads = DRAFTER_HEADS.search(text) is not None
    h = fc[0] if fc and len(fc) == 2 else None
    q_in = q0[1] if q0 and len(q0) == 2 else None
    selector = heads and ("\ncandidate_selector." in text or "\nmodel.candidate_selector." in text)
    if selector or any(".kernel_projection." in _strip(n) for n in (shapes if odd else lines_with(text, ".kernel_projection."))):
        votes.append(("dflash2", MEDIUM, "candidate_selector / grouped-conv tensors (DFlash2's selector head)"))
    if fc and top_hidden_norm and h and q_in == h:
        votes.append(
            ("dflash", MEDIUM, f"model-level hidden_norm and fc [{h}, {fc[1]}] over target states, layer-0 q_proj takes {q_in} (not 2×)")
        )
    if fc and h and (layer_hidden_norm or q_in == 2 * h or "midlayer" in layers):
        why = "per-layer hidden_norm" if layer_hidden_norm else ("midlayer.*" if "midlayer" in layers else f"layer-0 q_proj takes 2×{h}")
        votes.append(("eagle3", MEDIUM, f"fc [{h}, {fc[1]}] fusing target states and {why}"))
    if fc and h and fc[1] == 2 * h and not layer_hidden_norm and not top_hidden_norm and q_in in (None, h):
        votes.append(
            (
                "eagle",
                MEDIUM,
                f"fc [{h}, {2 * h}] over (embedding, feature){' with fc.bias' if _has(shapes, 'fc.bias') else ''} and no hidden_norm",
            )
        )
    medusa = medusa_heads(shapes) if heads and MEDUSA.search(text) else None
    if medusa:
        layout, numbers, _ = medusa
        votes.append(
            ("medusa", MEDIUM, f"{len(numbers)} Medusa head(s), each a residual block and a vocabulary head ({MEDUSA_WORDS[layout]})")
        )
    if heads and all(part.search(text) for part in MLP_PARTS):
        votes.append(("mlp_speculator", MEDIUM, "emb.N / proj.N / head.N tensors"))
    near = [_strip(n) for n in (shapes if odd else lines_with(text, *MTP_NEEDLES))]  # then exactly, as read without "model."
    mtp = [n for n in near if n.endswith((".eh_proj.weight", ".enorm.weight", ".hnorm.weight")) or n.startswith(("mtp.", "mtp_"))]
    if mtp and len(layers) >= 2:
        votes.append(("mtp", MEDIUM, f"{len(mtp)} MTP tensor(s) beside {len(layers)} decoder layers (e.g. {mtp[0]})"))
    drafter_parts = fc is not None or _has(shapes, "d2t") or _has(shapes, "t2d") or "midlayer" in layers
    if not drafter_parts and not mtp and len(layers) >= 2 and _has(shapes, "embed_tokens.weight"):
        votes.append(("causal_lm", MEDIUM, f"{len(layers)} decoder layers with an embedding and no fc fusion, vocab map or MTP tensors"))
    return votes


def config_votes(config: Mapping) -> list[tuple[str, int, str]]:
    """(family, weight, why) from config.json."""
    votes: list[tuple[str, int, str]] = []
    archs = config.get("architectures")
    arch = archs[0] if isinstance(archs, list) and archs and isinstance(archs[0], str) else None
    if arch:
        exact = [f for f in FAMILIES if arch in f.architectures]
        if exact:
            votes.append((exact[0].name, STRONG, f"architectures[0] = {arch!r}"))
        else:
            worded = sorted(((w, f) for f in FAMILIES for w in f.arch_words if w in arch.lower()), key=lambda x: -len(x[0]))
            if worded:
                votes.append((worded[0][1].name, STRONG, f"architectures[0] = {arch!r} (contains {worded[0][0]!r})"))
    st = config.get("speculators_model_type")
    if isinstance(st, str):
        fam = next((f for f in FAMILIES if st in f.speculators_types), None)
        votes.append((fam.name if fam else f"speculators:{st}", STRONG, f"speculators_model_type = {st!r}"))
    for f in FAMILIES:
        for k in f.config_keys:
            if k in config and config[k] not in (None, 0, False):
                votes.append((f.name, MEDIUM, f"config key {k}"))
    announced, key = announced_layers(config)
    if announced and key not in BY_NAME["mtp"].config_keys:  # in a wrapper's text config (Qwen3.5), or MiniMax's key
        votes.append(("mtp", MEDIUM, f"config key {key}"))
    dc = config.get("dflash_config")
    if isinstance(dc, Mapping) and any(k in dc for k in ("selector_rank", "selector_top_k", "conv_kernel_size")):
        votes.append(("dflash2", MEDIUM, "dflash_config has DFlash2's selector/conv fields"))
    return votes


def path_votes(path: str) -> list[tuple[str, int, str]]:
    """vLLM infers the method from words in the draft's path (config/speculative.py): weak evidence."""
    low = path.lower()
    for f in sorted(FAMILIES, key=lambda f: -max((len(w) for w in f.path_words), default=0)):
        for w in f.path_words:
            if w in low:
                return [(f.name, WEAK, f"the path contains {w!r} (vLLM infers method {f.method!r} from it)")]
    return []


def detect_family(config: Mapping | None, shapes: Mapping[str, Sequence[int]], path: str = "") -> FamilyVerdict:
    """The family all witnesses support most; ambiguous when two tie; unknown when none speaks; none at all for a
    checkpoint whose whole structure is no drafter's (a vision model, a LoRA adapter, a Mamba model, a reward head)."""
    other = what_it_is(config, shapes)
    if other:
        return FamilyVerdict(None, [], [], _seen(config or {}, shapes), not_drafter=other)
    votes = config_votes(config or {}) + structure_votes(shapes)
    # the path is heard only when the files say nothing: a directory's or Hub repo's name is not the checkpoint
    votes = votes or path_votes(path)
    # a family that extends another (DFlash2, DSpark: DFlash plus a head) takes the parent's votes once it has its own
    # an MTP head ships inside a full model: the causal LM's structure is the MTP family's, not a rival to it
    # (a config announcing MTP over a plain decoder stack is a target whose head is missing: MiniMax-M2.5)
    if any(fam == "mtp" for fam, _, _ in votes):
        votes = [v for v in votes if v[0] != "causal_lm"]
    for child in {fam for fam, _, _ in votes if fam in BY_NAME and BY_NAME[fam].extends}:
        parent = BY_NAME[child].extends
        votes = [(child, w, why) if fam == parent else (fam, w, why) for fam, w, why in votes]
    score: dict[str, int] = {}
    for fam, w, _ in votes:
        score[fam] = score.get(fam, 0) + w
    evidence = [f"{why} → {fam}" for fam, _, why in votes]
    seen = _seen(config or {}, shapes)
    if not score:
        return FamilyVerdict(None, evidence, [], seen)
    ranked = sorted(score.items(), key=lambda kv: -kv[1])
    # two families each backed by more than a path word (an architecture name against the tensors' structure, say):
    # the witnesses disagree, and reading it as either could turn a valid drafter into false errors
    supported = [k for k, v in ranked if v >= MEDIUM]
    if len(supported) > 1:
        mislabel = _mislabel(config or {}, votes, supported)
        if mislabel is not None:  # the engines build what the name says: that family is simulated, the rest is a finding
            return FamilyVerdict(BY_NAME[mislabel.named], evidence, [], seen, mislabel=mislabel)
        return FamilyVerdict(None, evidence, supported, seen)
    best = ranked[0][0]
    return FamilyVerdict(BY_NAME.get(best), evidence, [] if best in BY_NAME else [best], seen)


def _mislabel(config: Mapping, votes: list[tuple[str, int, str]], supported: list[str]) -> Mislabel | None:
    """Two families supported, one by the config alone (its architecture name, maybe its keys) and the other by the
    tensors' structure: engines dispatch on the name (SGLang's registry by architectures[0], vLLM's by the name its
    method rewrites), so the named family's class is what gets built. None when the tensors speak for the named family
    too (a real tie), when the other family has no structural evidence (two config witnesses disagreeing are not a
    mislabel), when a speculators config names the method, or when more than two disagree."""
    archs = config.get("architectures")
    arch = archs[0] if isinstance(archs, list) and archs and isinstance(archs[0], str) else None
    if arch is None or len(supported) != 2 or config.get("speculators_model_type") is not None:
        return None
    by_name = [fam for fam, w, why in votes if w == STRONG and why.startswith("architectures[0] = ")]
    if len(by_name) != 1 or by_name[0] not in supported or by_name[0] not in BY_NAME:
        return None
    named = by_name[0]
    structural = {fam for fam, _, _ in _structural(votes)}
    if named in structural:  # the tensors speak for the named family too: a real tie, not a mislabel
        return None
    shown = next(f for f in supported if f != named)
    if shown not in structural or shown not in BY_NAME:
        return None
    return Mislabel(named, arch, shown, tuple(why for fam, _, why in votes if fam == shown))


def _structural(votes: list[tuple[str, int, str]]) -> list[tuple[str, int, str]]:
    """The structural votes among `votes` (MEDIUM ones that are not config keys)."""
    return [v for v in votes if v[1] == MEDIUM and not v[2].startswith(("config key ", "dflash_config has "))]


def _seen(config: Mapping, shapes: Mapping[str, Sequence[int]]) -> str:
    archs = config.get("architectures")
    names = sorted(shapes)
    sample = ", ".join(names[:4]) + (f" … (+{len(names) - 4})" if len(names) > 4 else "")
    return f"architectures={archs!r}, model_type={config.get('model_type')!r}, {len(names)} tensors ({sample or 'none'})"
