"""Interpret an engine table against a checkpoint: which class, which parameters, and the fate of
every checkpoint tensor and every engine parameter. Nothing engine-specific lives here."""

from __future__ import annotations

import re
import sys
from collections import namedtuple
from enum import Enum

from ..checkpoint.reader import Checkpoint
from ..record import field, record, replace
from .expr import evaluate, row_context, value_or
from .facts import ROW_NAMES, checkpoint_facts  # noqa: F401 - checkpoint_facts: where callers long found it
from .spec import Dispatch, DraftClass, FamilyRange, Param, Step

TYPE_CHECKING = False  # typing's constant, without importing typing on a check's path (about 1 ms)
if TYPE_CHECKING:  # a type only: the view reads its facts from engines/facts.py, below both
    from ..view import CheckpointView


class _Word(str, Enum):
    """A status word: compares, hashes, prints and serialises as its plain string ("loaded")."""

    __str__ = str.__str__
    __format__ = str.__format__
    __hash__ = str.__hash__


class Fate(_Word):
    """What the engine does with one checkpoint tensor."""

    LOADED = "loaded"
    DROPPED = "dropped"  # unknown to the engine, skipped
    UNUSED = "unused"  # consumed on purpose (t2d, …)
    BUFFER = "buffer"  # fills non-parameter state (hot_token_id)
    OVERWRITTEN = "overwritten"  # loaded, then replaced by the target's
    RAISES = "raises"  # the engine raises on this name
    MISMATCHED = "mismatched"
    TRUNCATED = "truncated"  # loaded after the loader silently cut it along the TP dimension
    PADDED = "padded"  # loaded after the loader silently zero-padded it along the TP dimension


class Fill(_Word):
    """What one engine parameter holds after loading."""

    LOADED = "loaded"
    MISSING = "missing"  # random / initial value
    PARTIAL = "partial"  # some shards of a fused parameter unfilled
    SHARED = "shared-from-target"
    OWN_UNLESS_EQUAL = "own-unless-equal"  # engine compares with the target's at load
    HARMLESS = "initial-value"  # unfilled but its initial value is right for this config
    DEFAULT_INIT = "default-init"  # unfilled; keeps a small default initialisation (a bias), not a random matrix


# the short names the rules and reports use
LOADED, DROPPED, UNUSED, BUFFER, OVERWRITTEN, RAISES, MISMATCHED, TRUNCATED, PADDED = Fate
P_LOADED, P_MISSING, P_PARTIAL, P_SHARED, P_OWN_UNLESS_EQUAL, P_HARMLESS, P_DEFAULT_INIT = Fill


@record(frozen=False)
class TensorFate:
    name: str
    status: Fate
    engine_name: str | None = None
    shard: str | None = None
    reason: str = ""


@record(frozen=False)
class ParamFate:
    name: str
    shape: tuple | None
    status: Fill
    role: str
    filled_by: list[str] = field(default_factory=list)
    missing_shards: list[str] = field(default_factory=list)
    note: str = ""


@record(frozen=False)
class LoadReport:
    engine: str
    version: str
    era: FamilyRange
    cls: DraftClass
    dispatched: bool
    dispatch_message: str | None
    config_view: str  # which config the class read
    ns: dict
    tensors: list[TensorFate]
    params: list[ParamFate]
    errors: list[str]  # what the engine raises
    mismatched: list[dict]
    assumptions: list[str]
    # the release has no class for the drafter's family: the first release that has one (its class is what the
    # report simulates, so the rest of the findings say what that release would do)
    first_release: str | None = None
    simulated_release: str | None = None  # the first release of the row simulated in its place
    dispatch_fix: str | None = None  # what to write in config.json so that this release dispatches (L005's fix)
    # the release has the family but no class for the drafter's architecture: that architecture (first_release has one)
    first_release_arch: str | None = None

    @property
    def dropped(self) -> list[str]:
        """Checkpoint tensors silently lost: the engine knows no place for them."""
        return [t.name for t in self.tensors if t.status == DROPPED]

    @property
    def ignored_by_design(self) -> list[str]:
        """Tensors the engine consumes on purpose without using them (t2d) or replaces by the target's."""
        return [t.name for t in self.tensors if t.status in (UNUSED, OVERWRITTEN)]

    @property
    def missing(self) -> list[str]:
        out = []
        for p in self.params:
            if p.status == P_MISSING:
                out.append(p.name)
            elif p.status == P_PARTIAL:
                out.extend(f"{p.name}[{s}]" for s in p.missing_shards)
        return out


def _lookup(cfg: dict, path: str):
    """Key path lookup; returns (present, value). `len:` takes the length of a list, `max:` its largest int."""
    want_len, want_max = path.startswith("len:"), path.startswith("max:")
    if want_len or want_max:
        path = path[4:]
    cur = cfg
    for part in path.split("."):
        if isinstance(cur, dict) and part in cur:
            cur = cur[part]
        elif isinstance(cur, list) and part.isdigit() and int(part) < len(cur):
            cur = cur[int(part)]
        else:
            return False, None
    if want_len:
        return (True, len(cur)) if isinstance(cur, list) else (False, None)
    if want_max:
        ints = [v for v in cur if type(v) is int] if isinstance(cur, list) else []
        return (True, max(ints)) if ints and len(ints) == len(cur) else (False, None)
    return True, cur


def _resolve_fields(cls: DraftClass, cfg: dict, has: dict) -> tuple[dict, list[str]]:
    ns: dict = dict(has)
    errors: list[str] = []
    for f in cls.fields:
        value, found = f.default, False
        for src in f.sources:
            present, v = _lookup(cfg, src)
            if present and (v is not None or f.keep_null):
                if v is not None and not _valid(f, v):
                    errors.append(
                        f"config {src} = {str(v)[:40]!r} is not a valid {'boolean' if f.kind == 'bool' else 'size'}: "
                        "the engine fails or misbehaves building the drafter"
                    )
                    break
                value, found = v, True
                break
        if not found and f.required:
            errors.append(f.required)
        ns[f.name] = value
    for d in cls.derive:
        with row_context(f"derive {d.name}"):
            ns[d.name] = value_or(d.expr, ns, None)  # the config's values give none: no value
    return ns, errors


MAX_DIM = 2**40


def _valid(f, v) -> bool:
    if f.kind == "any":
        return True
    if f.kind == "bool":
        return isinstance(v, bool)
    return type(v) is int and 0 <= v < MAX_DIM


def _shape(exprs: tuple[str, ...], ns: dict) -> tuple | None:
    out = tuple(value_or(e, ns, None) for e in exprs)  # a dimension the config's values do not give: no shape
    return None if any(type(x) is not int or not 0 <= x < MAX_DIM**2 for x in out) else out


def _when(expr: str, ns: dict) -> bool:
    return bool(value_or(expr, ns, False))  # a condition the config's values cannot decide does not hold


def expand_params(cls: DraftClass, ns: dict) -> list[tuple[str, Param, dict]]:
    """The class's concrete parameter names for this config, with the namespace each shape uses."""
    out = []
    layers = ns.get("L") if isinstance(ns.get("L"), int) and 0 < ns.get("L") < 4096 else 1
    n_aux = ns.get("n_aux") if isinstance(ns.get("n_aux"), int) and 0 < ns.get("n_aux") < 4096 else 3
    # {m}: the layer's number as the checkpoint writes it, for heads whose layers follow the target's (MTP)
    base = ns.get("mtp_base") if isinstance(ns.get("mtp_base"), int) else 0
    for p in cls.params:
        idx_i = range(layers) if p.per_layer else [0]
        for i in idx_i:
            idx_j = range(n_aux) if "{j}" in p.name else [0]
            for j in idx_j:
                local = {**ns, "i": i, "j": j}
                if _when(p.when, local):
                    out.append((p.name.format(i=i, j=j, m=base + i), _per_expert(p, local), local))
    return out


def _per_expert(p: Param, local: dict) -> Param:
    """A fused routed-expert parameter with its shards once per expert id (Param.experts); any other as it is. An
    expert count the config does not give (or not a sane one) leaves the parameter without shards to account."""
    if not p.experts:
        return p
    n = _count(p.experts, local)
    shards = tuple((f"{e}.{s}" if s else str(e), shape) for e in range(n or 0) for s, shape in p.shards)
    return replace(p, shards=shards)


def _count(expr: str, ns: dict) -> int | None:
    n = value_or(expr, ns, None)
    return n if type(n) is int and 0 < n < 4096 else None


def _outside_layers(name: str, step: Step, ns: dict, params: dict, pattern: re.Pattern) -> bool:
    """KeepLayers: is this name outside the class's own layers (first + range(count))? A name without a layer
    number is read only when it already is one of the class's parameters (the top-level embedding). `pattern`: the
    step's `a`, compiled."""
    m = pattern.search(name)
    base, count = ns.get(step.b), ns.get(step.c or "L")
    if m is None:
        return name not in params
    if not isinstance(base, int) or not isinstance(count, int):
        return True
    return not base <= int(m.group(1)) < base + count


PATTERN_OPS = ("regex", "skip_unless", "keep_layers", "expert")  # the steps whose `a` is a regular expression


def active_steps(steps: tuple[Step, ...], ns: dict) -> tuple[tuple[Step, str, re.Pattern | None], ...]:
    """The loader steps whose `when` holds for this config, each with its replacement text (a regex step's `b` with
    the config's values filled in) and its compiled pattern: worked out once per load, not once per checkpoint tensor
    (an MTP target's head is thousands of tensors through a dozen steps)."""
    return tuple(
        (st, st.b.format(**ns) if st.op == "regex" and "{" in st.b else st.b, re.compile(st.a) if st.op in PATTERN_OPS else None)
        for st in steps
        if _when(st.when, ns)
    )


def _apply_steps(name: str, steps: tuple, params: dict, ns: dict) -> tuple[str, str | None, str | None, Step | None]:
    """Run one checkpoint name through the loader's pipeline (`steps`: active_steps, the ones this config runs).

    Returns (final name, shard, terminal op or None, the step that decided)."""
    shard = None
    for st, replacement, pattern in steps:
        op, a = st.op, st.a  # one step has one op: each branch below is the only one that can hold
        if op == "regex":
            name = pattern.sub(replacement, name)
        elif op == "drop":
            if a in name:
                return name, None, "drop", st
        elif op == "skip_unless":
            if not pattern.search(name):
                return name, None, "skip", st
        elif op == "keep_layers":
            if _outside_layers(name, st, ns, params, pattern):
                return name, None, "skip", st
        elif op == "buffer":
            if a in name:
                return st.b, None, "buffer", st
        elif op == "rename_if":
            if a in name:
                return st.b, None, None, st
        elif op == "substr":
            if a in name:
                name = name.replace(a, st.b)
        elif op == "prefix":
            if st.b not in name:
                name = a + name
        elif op == "prefix_if_not_param":
            if name not in params:
                name = a + name
        elif op == "stack":
            if a in name and shard is None:
                name, shard = name.replace(a, st.b), st.c
        elif op == "expert" and shard is None and (m := pattern.search(name)):
            name, shard = pattern.sub(st.b, name), f"{int(m.group(1))}.{st.c}" if st.c else str(int(m.group(1)))
    return name, shard, None, None


def _unknown_component(name: str, params: dict) -> tuple[str, str]:
    """vLLM-style: the first path component no module has, and the module it was looked up in."""
    module, rest = ("LlamaModel", name[len("model.") :]) if name.startswith("model.") else ("Eagle3LlamaForCausalLM", name)
    base = "model." if module == "LlamaModel" else ""
    parts = rest.split(".")
    for k in range(1, len(parts) + 1):
        prefix = base + ".".join(parts[:k])
        if not any(p == prefix or p.startswith(prefix + ".") for p in params):
            start = k - 1
            # ModuleList children are reported with their parent ("layers.1")
            if start > 0 and parts[k - 1].isdigit():
                return ".".join(parts[start - 1 : k]), module
            return parts[k - 1], module
    return parts[-1], module


def _tp_fit(cls: DraftClass, p: Param, found: tuple, expected: tuple) -> str | None:
    """Does the loader silently make `found` fit (SGLang narrows along the TP dimension, and from 0.5.11
    zero-pads some parameters)? Only a difference along p.tp_dim qualifies; anything else raises."""
    d = p.tp_dim
    if d is None or len(found) != len(expected) or any(f != e for i, (f, e) in enumerate(zip(found, expected)) if i != d):
        return None
    if found[d] > expected[d] and cls.wider_tp == "truncate":
        return TRUNCATED
    if found[d] < expected[d] and cls.narrower_tp == "pad" and p.pads:
        return PADDED
    return None


class Dispatched(namedtuple("Dispatched", "cls ok message view view_name assumptions fix", defaults=(None,))):
    """The class an engine version builds for a config, and the config view that class reads."""

    # the fields and their types (collections.namedtuple: typing.NamedTuple imports typing, ~1 ms of a check)
    # cls: DraftClass
    # ok: bool  # False: the engine cannot dispatch this config (we still simulate its EAGLE-3 class)
    # message: str | None  # what the engine says when it cannot
    # view: dict
    # view_name: str  # "config.json as written", "speculators → flat (translated)", …
    # assumptions: list[str]
    # fix: str | None = None  # what to write so that the engine dispatches (Dispatch.arch_fix)

    __slots__ = ()


def dispatch(view: CheckpointView, era: FamilyRange, family: FamilyRange | None = None) -> Dispatched:
    """Which class this engine version builds for the checkpoint's config, and the config view it reads: the
    era's EAGLE-3 dispatch, or the family row's (`family`) for a drafter of another family.

    When the engine cannot dispatch, we still simulate with the family's main class over our flat view
    of the config (`view.flat`, flattened once), so the next problem shows in the same run (and say so)."""
    config = view.ckpt.config or {}
    d = family.dispatch if family else era.dispatch
    classes = family.classes if family else era.classes
    assumptions: list[str] = []
    fallback = classes[d.fallback]
    is_spec = "speculators_config" in config or "transformer_layer_config" in config
    archs = config.get("architectures") if isinstance(config.get("architectures"), list) else []
    arch = archs[0] if archs and isinstance(archs[0], str) else None

    if is_spec:
        if not d.speculators:
            msg = (
                f"{era.engine} {era.name} cannot read a speculators-format config "
                f"(architectures={archs}, speculators_config): it dispatches on architectures[0] and knows no {arch!r}"
            )
            if d.speculators_refusal:
                msg = d.speculators_refusal.format(archs=archs, arch=arch)
            assumptions.append(f"simulated with {fallback.name} over the flattened config, as if the config were converted")
            return Dispatched(fallback, False, msg, _as_converted(view.flat), "flattened (assumed)", assumptions)
        missing = speculators_missing(config, d)
        if missing:
            msg = d.speculators_missing.format(missing=", ".join(missing))
            assumptions.append(f"simulated with {fallback.name} over the flattened config")
            return Dispatched(fallback, False, msg, dict(view.flat), "flattened (assumed)", assumptions)
        tlc = config.get("transformer_layer_config") or {}
        mt = tlc.get("model_type") if isinstance(tlc, dict) else None
        target_arch = d.speculators_arch_by_model_type.get(mt) if isinstance(mt, str) else None
        # the engine's translation (its Dispatch row's speculators_* fields: vLLM's speculators/algos.py)
        translated = _translated(view.flat, d)
        for k, v in d.speculators_defaults.items():
            if translated.get(k) is None:
                translated[k] = v
        if target_arch is None:
            msg = d.speculators_unsupported.format(mt=mt)
            assumptions.append(f"simulated with {fallback.name}")
            return Dispatched(fallback, False, msg, translated, "speculators → flat (translated)", assumptions)
        cls_name = d.registry.get(target_arch, target_arch)
        if cls_name not in classes:
            assumptions.append(f"{target_arch} is not modelled; simulated with {fallback.name}")
            return Dispatched(fallback, True, None, translated, "speculators → flat (translated)", assumptions)
        return Dispatched(classes[cls_name], True, None, translated, "speculators → flat (translated)", assumptions)

    if "*" in d.registry:  # the engine builds one class whatever the architecture says
        return Dispatched(classes[d.registry["*"]], True, None, dict(config), "config.json as written", assumptions)
    p = d.rewrite_prefix
    if p and arch and not (arch.startswith(p) or (d.rewrite_keeps_suffix and arch.endswith(p))):
        rewritten = p + arch
        assumptions.append(d.rewrite_note.format(arch=arch, rewritten=rewritten))
        arch = rewritten
    cls_name = d.registry.get(arch or "")
    if cls_name is None:
        msg = f"ValueError: Model architectures {archs} are not supported by {era.engine} {era.name} for an EAGLE-3 draft"
        if arch in d.plain_classes and d.plain_message:
            msg = d.plain_message.format(arch=arch)
        elif d.unknown_message:
            msg = d.unknown_message.format(archs=archs, arch=arch)
        # the class the engine itself maps the config's model_type to (its speculators translation), when it has one:
        # the class a user renaming the architecture would reach (a Qwen3 drafter's q/k norms are not Llama's)
        mt = config.get("model_type")
        by_type = d.speculators_arch_by_model_type.get(mt) if isinstance(mt, str) else None
        own = classes.get(d.registry.get(by_type, by_type)) if by_type else None
        if own is not None and own is not fallback:
            assumptions.append(f"simulated with {own.name} (the engine's class for model_type {mt!r}: {d.cite})")
            return Dispatched(own, False, msg, dict(config), "config.json as written", assumptions)
        # the architecture that reaches the engine's class for this model_type (vLLM EAGLE-1: mistral → MistralForCausalLM,
        # which method eagle names EagleMistralForCausalLM): simulated, and named in the fix
        write = d.arch_by_model_type.get(mt) if isinstance(mt, str) else None
        if write and p and not (write.startswith(p) or (d.rewrite_keeps_suffix and write.endswith(p))):
            own = classes.get(d.registry.get(p + write, ""))
        else:
            own = classes.get(d.registry.get(write, "")) if write else None
        if own is not None and own is not fallback:
            assumptions.append(
                f"simulated with {own.name} (the class {era.engine} builds for architectures {[write]}, model_type {mt!r}: {d.cite})"
            )
            fix = d.arch_fix.format(arch=write, cls=own.name, mt=mt) if d.arch_fix else None
            return Dispatched(own, False, msg, dict(config), "config.json as written", assumptions, fix)
        assumptions.append(f"simulated with {fallback.name} (the engine's {'EAGLE-3' if family is None else family.family} drafter class)")
        return Dispatched(fallback, False, msg, dict(config), "config.json as written", assumptions)
    return Dispatched(classes[cls_name], True, None, dict(config), "config.json as written", assumptions)


def speculators_missing(config: dict, d: Dispatch) -> list[str]:
    """The key paths of a speculators config that this dispatch requires and the config leaves empty
    (vLLM's validate_speculators_config raises on each): what `convert` refuses to write, and what `check` reports."""
    return [p for p in d.speculators_required if _lookup(config, p)[1] in (None, "", {}, [])]


def _as_converted(flat: dict) -> dict:
    """The flat config as `convert` writes it for an engine that reads no speculators config (what the refused config
    is simulated as): a copy, without a null target_hidden_size (convert writes it only when it is known)."""
    return {k: v for k, v in flat.items() if not (k == "target_hidden_size" and v is None)}


def _translated(flat: dict, d: Dispatch) -> dict:
    """The flat config as the engine's speculators translation passes it on: a copy, without the keys it copies only
    when they are not null (Dispatch.speculators_skip_null)."""
    return {k: v for k, v in flat.items() if not (k in d.speculators_skip_null and v is None)}


def row_origin(engine: str, cls: DraftClass) -> str:
    """Where a class's rows are written (the table module, or the file of a table package that holds them: its
    `row_file`) and what they mirror (the engine file), for a RowError."""
    row_file = getattr(sys.modules.get(f"{__package__}.{engine}"), "row_file", None)
    where = row_file(cls) if row_file else f"specbridge/engines/{engine}.py"
    return f"{where}, class {cls.name} (rows mirroring {cls.file})"


def simulate(view: CheckpointView, era: FamilyRange, version: str, family: FamilyRange | None = None) -> LoadReport:
    """The engine version's load of this checkpoint: dispatch, then the config namespace the class is
    built from, then every checkpoint tensor's fate, then every parameter's fill. `family`: the engine's row
    for a drafter family other than EAGLE-3 that covers this version."""
    dis = dispatch(view, era, family)
    with row_context(lambda: row_origin(era.engine, dis.cls)):  # a broken row is named with its table's file
        ns, errors = namespace(dis, view.facts)
        params = {name: (p, local) for name, p, local in expand_params(dis.cls, ns)}
        fates, filled, mismatched = tensor_fates(view.ckpt, dis.cls, params, ns, errors)
        fills = param_fills(dis.cls, params, filled, fates)
        # the loader's own checks run after every tensor went through it (only in a class the engine built), and the
        # first that raises is the one seen
        if dis.ok:
            errors.extend(empty_layers(dis.cls, params, filled) or unfilled(dis.cls, params, filled, ns))
    return LoadReport(
        engine=era.engine,
        version=version,
        era=era,
        cls=dis.cls,
        dispatched=dis.ok,
        dispatch_message=dis.message,
        dispatch_fix=dis.fix,
        config_view=dis.view_name,
        ns=ns,
        tensors=fates,
        params=fills,
        errors=list(dict.fromkeys(errors)),
        mismatched=mismatched,
        assumptions=dis.assumptions,
    )


def empty_layers(cls: DraftClass, params: dict, filled: dict) -> list[str]:
    """What the engine raises for each of the class's layers no tensor reached (vLLM's MTP completeness check);
    nothing when the class has no such check (the layer keeps its initial values: rule L002 says so)."""
    if not cls.empty_layer_message:
        return []
    got: dict[int, bool] = {}
    for name, (p, local) in params.items():
        if p.per_layer:
            m = local["i"] + (local.get("mtp_base") if isinstance(local.get("mtp_base"), int) else 0)
            got[m] = got.get(m, False) or bool(filled[name])
    return [cls.empty_layer_message.format(layer=m) for m, any_filled in sorted(got.items()) if not any_filled]


def unfilled(cls: DraftClass, params: dict, filled: dict, ns: dict) -> list[str]:
    """What the loader's own completeness check raises over the parameters no tensor filled at load time, before
    anything is shared from the target (vLLM's DefaultModelLoader: "Following weights were not initialized")."""
    if not cls.unfilled_message or not _when(cls.unfilled_when, ns):
        return []
    names = [name for name, (p, _) in params.items() if not filled[name] and not p.side_file and (cls.unfilled_all or p.plain)]
    return [cls.unfilled_message.format(names=", ".join(names))] if names else []


def namespace(dis: Dispatched, facts: dict[str, bool]) -> tuple[dict, list[str]]:
    """The values the class's shape and `when` expressions read (config fields as the engine reads them,
    derived sizes, what the checkpoint holds: `facts`), and what the engine raises while building the class."""
    ns, errors = _resolve_fields(dis.cls, dis.view, facts)
    if dis.message:
        errors.insert(0, dis.message)
    errors.extend(r.message for r in dis.cls.raises if _when(r.when, ns))
    return ns, errors


def tensor_fates(
    ckpt: Checkpoint, cls: DraftClass, params: dict, ns: dict, errors: list[str]
) -> tuple[list[TensorFate], dict[str, dict[str | None, str]], list[dict]]:
    """Every checkpoint tensor through the loader's name pipeline: its fate, which parameter (shard) it
    fills, and the size mismatches the engine raises on (appended to `errors`)."""
    filled: dict[str, dict[str | None, str]] = {name: {} for name in params}
    fates: list[TensorFate] = []
    mismatched: list[dict] = []
    steps = active_steps(cls.loader, ns) if ckpt.tensors else ()
    groups = group_params(params)
    expected = ExpectedShapes(params)
    for n, info in ckpt.tensors.items():
        # names under `unknown_under` bypass the loader's steps: looked up as written, raised on when absent
        direct = bool(cls.unknown_under) and n.startswith(cls.unknown_under)
        final, shard, term, st = (n, None, None, None) if direct else _apply_steps(n, steps, params, ns)
        if term == "drop":
            fates.append(TensorFate(n, UNUSED, None, None, st.why))
        elif term == "skip":
            fates.append(TensorFate(n, DROPPED, None, None, st.why))
        elif term == "buffer":
            fates.append(TensorFate(n, BUFFER, final, None, f"fills {final} ({st.why})" if st.why else f"fills {final}"))
        elif final not in params and (group := _group_of(final, groups)):
            filled[group][None] = n
            fates.append(TensorFate(n, LOADED, final, shard, f"read into {group.rstrip('.')} by the target's own layer loader"))
        elif final not in params:
            fates.append(_unknown_name(cls, n, final, shard, params, errors))
        else:
            fates.append(_fit(cls, n, info, final, shard, params[final], filled, mismatched, errors, expected))
    return fates, filled, mismatched


def group_params(params: dict) -> tuple[tuple[str, str, tuple[str, ...] | str], ...]:
    """(name, prefix, parts) of each group parameter (a whole submodule, Param.group), in the class's order: the
    few a name is looked up among, not every parameter."""
    return tuple((name, name.rstrip("*"), p.group_parts) for name, (p, _) in params.items() if p.group)


def _group_of(final: str, groups: tuple) -> str | None:
    """The group parameter (group_params) this engine name falls in, if any."""
    for name, prefix, parts in groups:
        if final.startswith(prefix) and (not parts or final[len(prefix) :].startswith(parts)):
            return name
    return None


def _unknown_name(cls: DraftClass, n: str, final: str, shard: str | None, params: dict, errors: list[str]) -> TensorFate:
    """A name that reaches no parameter: ignored on purpose, raised on, or dropped silently."""
    ignored = next((s for s in cls.loader if s.op == "ignore_suffix" and n.endswith(s.a)), None)
    if ignored:
        return TensorFate(n, UNUSED, final, None, ignored.why)
    if cls.unknown_under and n.startswith(cls.unknown_under):
        msg = cls.unknown_under_message.format(name=n)
        errors.append(msg)
        return TensorFate(n, RAISES, final, shard, msg)
    if shard is not None and cls.unknown_stacked == "raise" and not final.endswith(cls.unknown_stacked_skips):
        msg = cls.unknown_stacked_message.format(name=final)
        errors.append(msg)
        return TensorFate(n, RAISES, final, shard, msg)
    if cls.unknown == "raise":
        comp, module = _unknown_component(final, params)
        msg = cls.unknown_message.format(name=final, component=comp, module=module)
        errors.append(msg)
        return TensorFate(n, RAISES, final, shard, msg)
    return TensorFate(n, DROPPED, final, shard, cls.unknown_message.format(name=n))


class ExpectedShapes:
    """The shape each parameter (or shard) expects, worked out once per load (tensor_fates) rather than once per
    checkpoint tensor: a fused routed-expert parameter has a shard per expert and projection (256 × 3 for
    DeepSeek-V3's MTP head), all of one projection's shards sharing one shape expression."""

    def __init__(self, params: dict) -> None:
        self.params = params
        self._shards: dict[str, dict] = {}  # parameter name -> {shard: shape expressions}
        self._shapes: dict[tuple, tuple | None] = {}  # (parameter name, shape expressions) -> shape

    def shards(self, final: str) -> dict:
        got = self._shards.get(final)
        if got is None:
            got = self._shards[final] = dict(self.params[final][0].shards)
        return got

    def shape(self, final: str, exprs: tuple[str, ...]) -> tuple | None:
        key = (final, exprs)
        if key not in self._shapes:
            self._shapes[key] = _shape(exprs, self.params[final][1])
        return self._shapes[key]


def _fit(
    cls: DraftClass,
    n: str,
    info,
    final: str,
    shard: str | None,
    param: tuple,
    filled: dict,
    mismatched: list,
    errors: list[str],
    shapes: ExpectedShapes,
) -> TensorFate:
    """A tensor that reaches a parameter: loaded, silently cut or padded, or a size mismatch (`shapes`: the load's)."""
    p, local = param
    if p.shards:
        shard_shapes = shapes.shards(final)
        if shard not in shard_shapes:
            return TensorFate(n, DROPPED, final, shard, f"{final} has no shard {shard!r}")
        expected = shapes.shape(final, shard_shapes[shard])
    else:
        expected = shapes.shape(final, p.shape)
    if expected is not None and tuple(info.shape) != expected:
        silent = _tp_fit(cls, p, tuple(info.shape), expected)
        if silent:
            filled[final][shard] = n
            return TensorFate(
                n,
                silent,
                final,
                shard,
                f"{'cut' if silent == TRUNCATED else 'zero-padded'} from {list(info.shape)} to "
                f"{list(expected)} along dim {p.tp_dim}, without a message",
            )
        mm = {"name": final + (f"[{shard}]" if shard else ""), "expected": list(expected), "found": list(info.shape)}
        mismatched.append(mm)
        errors.append(f"size mismatch for {mm['name']}: checkpoint {list(info.shape)}, engine expects {list(expected)}")
        return TensorFate(n, MISMATCHED, final, shard, f"engine expects {list(expected)}")
    filled[final][shard] = n
    return TensorFate(n, LOADED, final, shard)


def _restate_loaded(fates: list[TensorFate], name: str, status: str, reason: str) -> None:
    """What happens after loading to the tensors loaded into parameter `name`: replaced by the target's, or never
    written at all."""
    for t in fates:
        if t.engine_name == name and t.status == LOADED:
            t.status, t.reason = status, reason


def param_fills(cls: DraftClass, params: dict, filled: dict, fates: list[TensorFate]) -> list[ParamFate]:
    """Every engine parameter after loading and the post-load sharing with the target (which turns the
    tensors it replaces into OVERWRITTEN)."""
    out: list[ParamFate] = []
    for name, (p, local) in params.items():
        got = filled[name]
        share_expr = cls.share_embed if p.share == "embed" else cls.share_head if p.share == "head" else None
        share = evaluate(share_expr, local) if share_expr else "own"
        if p.side_file and not got:
            got = {None: p.side_file}
        missing_shards = [s for s, _ in p.shards if s not in got] if p.shards else ([] if got else ["*"])
        if share == "target":
            status, note = P_SHARED, f"replaced by the target's after loading ({cls.share_cite})"
            _restate_loaded(fates, name, OVERWRITTEN, "loaded, then replaced by the target's weights")
        elif not missing_shards:
            status, note = (P_OWN_UNLESS_EQUAL, "kept unless byte-equal to the target's") if share == "own-unless-equal" else (P_LOADED, "")
        elif p.shards and len(missing_shards) < len(p.shards) and p.whole:
            status = P_MISSING
            note = f"written only once all its shards are read, and {', '.join(missing_shards)} never is: all of it keeps its initial value"
            _restate_loaded(fates, name, DROPPED, f"read, then never written: {name} waits for {', '.join(missing_shards)} too")
        elif p.shards and len(missing_shards) < len(p.shards):
            status, note = P_PARTIAL, "some shards are never written: those rows keep their initial values"
        elif _when(p.missing_ok, local):
            status, note = P_HARMLESS, p.missing_note
        elif _when(p.missing_small, local):
            status, note = P_DEFAULT_INIT, p.missing_note
        else:
            status, note = P_MISSING, "nothing in the checkpoint fills it: it keeps its random initial value"
        out.append(
            ParamFate(name, _param_shape(p, local), status, p.role, list(got.values()), missing_shards if status == P_PARTIAL else [], note)
        )
    return out


def _param_shape(p: Param, local: dict) -> tuple | None:
    """The parameter's shape; a fused one's is its shards stacked along dim 0 (when they agree elsewhere)."""
    if not p.shards:
        return _shape(p.shape, local)
    if p.experts:  # FusedMoE's (experts, one expert's shards stacked, …): expert 0's shards give one expert's shape
        first = tuple(x for x in p.shards if x[0].split(".")[0] == "0")
        one = _param_shape(replace(p, experts="", shards=first), local) if first else None
        return (len(p.shards) // len(first), *one) if one else None
    parts = [_shape(s, local) for _, s in p.shards]
    if all(parts) and len({x[1:] for x in parts}) == 1:
        return (sum(x[0] for x in parts), *parts[0][1:])
    return None
