"""What every rule reads: the checkpoint and its canonical description (one view, described once), the target,
the launch line and — for engine rules — the simulated load of one engine version. Values several rules share (the vocab
maps, the aux-layer resolution) are derived here once per context, declared as properties."""

from __future__ import annotations

import operator
from array import array
from functools import cached_property

from ..checkpoint.errors import CheckpointError
from ..checkpoint.reader import Checkpoint
from ..checkpoint.target import TargetInfo
from ..checkpoint.values import int_array
from ..engines.capture import Capture, default_boundaries, engine_capture
from ..engines.launch import Launch
from ..engines.registry import Placement
from ..engines.simulate import LoadReport
from ..layouts.canonical import Drafter
from ..layouts.embedding import EmbedStats
from ..record import record
from ..view import CheckpointView


def eagle1_convertible(cls_name: str, ckpt: Checkpoint) -> bool:
    """Whether convert writes this EAGLE-1/2 class's layout (a layout's architecture is its class's name) from this
    drafter. convert's tables are imported here only, for an EAGLE-1/2 drafter's fix: a check imports no writer."""
    from ..convert.eagle1 import EAGLE1_LAYOUTS, convertible

    return cls_name in {lay.architecture for lay in EAGLE1_LAYOUTS.values()} and convertible(ckpt.config or {}, ckpt.tensors)


@record(frozen=False)
class Context:
    view: CheckpointView  # the checkpoint described once (view.read_view)
    rep: LoadReport | None = None  # None for the rules that name no engine (run once per checkpoint)
    place: Placement | None = None  # how the engine version was placed (R rules)
    target: TargetInfo | None = None
    launch: Launch | None = None
    path: str = "PATH"
    parent: Checkpoint | None = None  # the checkpoint this one was fine-tuned from
    embed: EmbedStats | None = None  # sampled once per checkpoint
    family: str = "eagle3"  # the drafter family its evidence shows (families/detect.py)
    mtp: object | None = None  # the MTP head a target carries (families/mtp.py MtpHead), for family "mtp"
    # a plain draft model (family "causal_lm"): the tokenizer comparison with the target (rules/draft_model.py
    # Tokens), read once per check, and the engine version with its draft-model row (engines/registry.py DraftModelPlace)
    tokens: object | None = None
    draft_place: object | None = None

    @property
    def ckpt(self) -> Checkpoint:
        return self.view.ckpt

    @property
    def fam(self):
        """The family's row (families/table.py): what the rules read of the family, never its name."""
        from ..families.table import BY_NAME

        return BY_NAME[self.family]

    @property
    def d(self) -> Drafter:
        """The canonical description (layout, geometry, the flat config as `d.cfg`)."""
        return self.view.drafter

    @property
    def eng(self) -> str:
        return f"{self.rep.engine} {self.rep.version}"

    @property
    def convert_fix(self) -> str:
        mis = self.view.verdict.mislabel
        if mis is not None:  # converting would not make another family's tensors this family's: L017 says what would
            from ..families.table import BY_NAME

            shown, named = BY_NAME[mis.shown].short, BY_NAME[mis.named].short
            return (
                f"these are {shown} tensors under an architecture name of the {named} family: give the config the {shown} "
                f"architecture and launch method (L017); converting them as {named} would not load them"
            )
        fix = self.fam.fix  # what the family's row says a load error's fix is (families/table.py)
        if fix == "serve_original":  # an MTP head ships inside the target: nothing to convert, the files must hold it
            return (
                f"serve a checkpoint whose MTP tensors are the ones {self.rep.cls.name} reads on {self.eng} (the publisher's "
                f"original; the names: specbridge check {self.path} --engine {self.rep.engine}=={self.rep.version} --tables), "
                "or serve without MTP"
            )
        if (  # convert writes this class's layout, from a drafter it reads
            fix == "convert_eagle1" and eagle1_convertible(self.rep.cls.name, self.ckpt)
        ):
            return f"specbridge convert {self.path} --engine {self.rep.engine}=={self.rep.version} -o OUT"
        if fix == "rename_heads":  # Medusa's heads trained per head: their names, biases and vocab are config and tensors
            return (
                f"give the checkpoint the tensor names and config.json keys {self.rep.cls.name} reads on {self.eng} "
                f"(the tables: specbridge check {self.path} --engine {self.rep.engine}=={self.rep.version} --tables); "
                "specbridge convert does not write Medusa heads"
            )
        if fix != "convert":  # convert writes EAGLE-3, DFlash and Llama EAGLE-1 layouts: never another family's
            return (
                f"rename the checkpoint's tensors / config to what {self.rep.cls.name} reads on {self.eng} "
                f"(the tables: specbridge check {self.path} --engine {self.rep.engine}=={self.rep.version} --tables)"
            )
        return f"specbridge convert {self.path} --engine {self.rep.engine}=={self.rep.version} -o OUT"

    @property
    def ht(self) -> int | None:
        """The target hidden size fc's input is made of."""
        if self.d.cfg_target_hidden_size:
            return self.d.cfg_target_hidden_size
        if self.target and self.target.hidden_size:
            return self.target.hidden_size
        return self.d.hidden_size

    @property
    def k(self) -> int | None:
        """How many aux states fc takes (fc input width / target hidden size), when that divides."""
        ht = self.ht
        if self.d.fc_in and ht and self.d.fc_in % ht == 0:
            return self.d.fc_in // ht
        return None

    @cached_property
    def fit(self):
        """What the drafter reads from its target, as its family's module states it (families/fit.py), or None."""
        from ..families.fit import fit_of

        return fit_of(self.family, self.ckpt)

    @cached_property
    def vocab(self) -> VocabMaps:
        return read_vocab_maps(self)

    @cached_property
    def aux(self) -> AuxResolution | None:
        return resolve_aux(self)


# --- vocab maps -------------------------------------------------------------------------------
# d2t has up to ~10^5–10^6 entries and t2d ~10^6: every pass below runs in C (array methods, map/filter
# over builtins, min/max), never a Python-level loop per entry.


@record
class VocabMaps:
    V: int | None  # target vocab (the target's when known)
    Vd: int | None  # draft vocab (lm_head rows, else the config)
    d2t: array | None  # None: absent, not an integer table, or unreadable (`d2t_error` says which)
    d2t_error: str | None
    t2d: array | None
    t2d_error: str | None
    ascending: bool  # offsets never decrease <=> target ids strictly increase
    lo: int  # smallest / largest target id d2t selects (0, -1 when empty)
    hi: int


def d2t_targets(d2t: array):
    """The target id of each draft id (target_id = i + d2t[i]), lazily; Python ints, so hostile offsets
    near ±2^63 cannot overflow."""
    return map(operator.add, d2t, range(len(d2t)))


def target_id_range(d2t: array, ascending: bool) -> tuple[int, int]:
    """Smallest and largest target id d2t selects. Ascending offsets mean increasing target ids, so the
    ends are the first and last entries: no pass over the map."""
    if ascending:
        return d2t[0], len(d2t) - 1 + d2t[-1]
    tgt = list(d2t_targets(d2t))
    return min(tgt), max(tgt)


def zeros(a: array) -> int:
    """How many entries of an integer array are 0; a one-byte mask (t2d) counted as bytes, at memchr's speed (an
    array's own count makes a Python int of each of its 160 k entries)."""
    return a.tobytes().count(0) if a.itemsize == 1 else a.count(0)


def _non_decreasing(a: array) -> bool:
    """Whether the offsets never decrease: timsort's run detection in C, one pass over an already sorted list."""
    values = a.tolist()
    return sorted(values) == values


def unset_in_t2d(t2d: array, d2t: array, inside: bool) -> int:
    """How many of d2t's target ids t2d does not mark (ids outside t2d are V003's business, not counted).
    `inside`: every id is known to lie in t2d, so the range filter is skipped."""
    ids = d2t_targets(d2t)
    if not inside:
        ids = filter(range(len(t2d)).__contains__, ids)
    ids = tuple(ids)
    if len(ids) < 2:  # itemgetter of one index returns the value, not a tuple
        return operator.countOf(map(t2d.__getitem__, ids), 0)
    return operator.itemgetter(*ids)(t2d).count(0)  # one C loop over the ids, not an iterator step each


def _int_map(info) -> tuple[array | None, str | None]:
    if info is None:
        return None, None
    try:
        return int_array(info), None
    except CheckpointError as e:
        return None, e.message


def read_vocab_maps(c: Context) -> VocabMaps:
    d, t = c.d, c.target
    V = (t.vocab_size if t and t.vocab_size else None) or d.vocab_size or d.vocab_from_keys
    Vd = d.draft_vocab_from_keys or d.draft_vocab_size
    d2t_info = d.tensors.get("d2t")
    if d2t_info is not None and d2t_info.dtype not in ("I64", "I32"):
        d2t, d2t_error = None, f"d2t has dtype {d2t_info.dtype}; it must hold integer offsets (int64)."
    else:
        d2t, d2t_error = _int_map(d2t_info)
    t2d, t2d_error = _int_map(d.tensors.get("t2d")) if d2t is not None else (None, None)
    ascending = d2t is not None and _non_decreasing(d2t)
    lo, hi = target_id_range(d2t, ascending) if d2t else (0, -1)
    return VocabMaps(V, Vd, d2t, d2t_error, t2d, t2d_error, ascending, lo, hi)


# --- aux layers ---------------------------------------------------------------------------------


@record
class AuxResolution:
    """The target layer boundaries fc was trained on, and the ones this engine version feeds."""

    n: int  # target layers
    trained: list[int]
    trained_note: str
    alternative: list[int] | None  # the other reading, when the evidence disagrees
    capture: Capture

    def table(self) -> dict:
        """What the report shows (and --json carries as aux_layers)."""
        cap = self.capture
        return {
            "trained": self.trained,
            "trained_note": self.trained_note,
            "fed": cap.boundaries,
            "ids_source": cap.ids_source,
            "notes": cap.notes,
            "alternative_trained": self.alternative,
        }


def output_of_layer_default(n: int) -> list[int]:
    """[1, N//2-1, N-4]: SpecForge/ModelOpt/SGLang's default ids (outputs of those layers). Top-level ids equal to
    it were copied from an eagle_config without the +1 that input-of-layer readers need (e.g. the speculators
    converter, nm-testing/Qwen3-235B-A22B-EAGLE3-converted-speculators-lmsys)."""
    return sorted({1, n // 2 - 1, n - 4})


def trained_boundaries(d: Drafter, n: int) -> tuple[list[int], str, list[int] | None]:
    """(boundaries, how they were read, the other reading when the evidence disagrees)."""
    ids = d.aux_ids
    if ids is None:
        trained = default_boundaries(n)
        return trained, f"no ids recorded: assumed the producers' shared default, boundaries {trained}", None
    if d.aux_ids_where == "top-level" and sorted(ids) == output_of_layer_default(n):
        trained = [i + 1 for i in ids]
        return (
            trained,
            (
                f"ids {ids} at top level, but they are exactly the output-of-layer default [1, N//2-1, N-4] of "
                "SpecForge/ModelOpt/SGLang: copied from an eagle_config without the +1 (speculators' converter copies "
                f"ids verbatim), so boundaries {trained}"
            ),
            None,
        )
    if d.aux_ids_where == "top-level":
        return list(ids), f"ids {ids} at top level (speculators/vLLM convention: input of layer i)", None
    trained = [i + 1 for i in ids]
    note = f"ids {ids} under eagle_config (SpecForge/ModelOpt convention: output of layer i = boundary i+1)"
    # tensors in speculators/vLLM naming under an SGLang-style config: the ids may have been copied from a
    # speculators config (input-of-layer) — the story's situation
    alt = list(ids) if d.key_style == "layers" and d.config_style != "speculators" else None
    return trained, note, alt


def resolve_aux(c: Context) -> AuxResolution | None:
    t, d = c.target, c.d
    if t is None or not t.num_layers or c.rep is None:
        return None
    n = t.num_layers
    trained, note, alt = trained_boundaries(d, n)
    ec_ids = d.aux_ids if d.aux_ids_where == "eagle_config" else None
    top_ids = d.aux_ids if d.aux_ids_where == "top-level" else None
    cap = engine_capture(c.rep.engine, c.rep.version, t.architecture, t.text_model_type or t.model_type, n, top_ids, ec_ids)
    return AuxResolution(n, trained, note, alt, cap)
