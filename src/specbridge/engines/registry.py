"""Place an engine version in the range of a drafter family that holds it (`placements`; EAGLE-3's ranges are its loader
eras). Adding a release means adding or extending a FamilyRange row.

Versions are read by PEP 440 (`packaging`): pre-releases, post-releases and local tags (`+cu124`) are
placed by the release they belong to, and every placement that is not a plain, modelled release is said
in the result (`Placement.how`), so `check` can turn it into a finding instead of a silent guess."""

from __future__ import annotations

import importlib
from collections import namedtuple
from collections.abc import Iterator, MutableMapping

from .spec import (
    CaptureRule,
    DraftModelRange,
    FamilyRange,
    Launcher,
    MethodInference,
    in_release_range,
    is_prerelease,
    parse_version,
)

TYPE_CHECKING = False  # typing's constant, without importing typing on a check's path (about 1 ms)
if TYPE_CHECKING:  # the SERVE rows' type only: a check serves nothing (engines/serving.py, ~1 ms of import)
    from .serving import Serving


class EngineTable(MutableMapping):
    """One table per engine (its eras, its family ranges, its launch row, …), taken from that engine's module
    (engines/sglang.py, vllm.py, trtllm.py) the first time it is asked for: a check of one engine's release imports and
    builds that engine's rows only, and a check of a drafter family reads no engine it is not asked about. Listing the
    engines (`list(ENGINES)`, `name in ENGINES`) imports nothing. A value can be replaced (a new release read in a
    test, the benchmark's copies of the rows)."""

    def __init__(self, attr: str, engines: tuple[str, ...]):
        self._attr, self._engines, self._got, self._replaced = attr, engines, {}, set()

    def __getitem__(self, name: str):
        if name in self._got:
            return self._got[name]
        if name not in self._engines:
            raise KeyError(name)
        value = getattr(importlib.import_module(f"{__package__}.{name}"), self._attr)
        if self._attr in ("ERAS", "FAMILY_RANGES"):
            value = with_adopted(name, value)
        self._got[name] = value
        return value

    def __setitem__(self, name: str, value) -> None:
        if name not in self._engines:
            self._engines += (name,)
        self._got[name] = value
        self._replaced.add(name)

    def replaced(self, name: str) -> bool:
        """Whether the engine's table was set whole (a test's new release, the benchmark's copies) instead of read from
        its module."""
        return name in self._replaced

    def __delitem__(self, name: str) -> None:
        if name not in self._engines:
            raise KeyError(name)
        self._engines = tuple(e for e in self._engines if e != name)
        self._got.pop(name, None)
        self._replaced.discard(name)

    def __contains__(self, name: object) -> bool:
        return name in self._engines

    def __iter__(self) -> Iterator[str]:
        return iter(self._engines)

    def __len__(self) -> int:
        return len(self._engines)

    def __repr__(self) -> str:
        return f"EngineTable({self._attr}: {', '.join(self._engines)})"


def with_adopted(engine: str, rows: tuple) -> tuple:
    """An engine's eras or family ranges with the runs scripts/adopt_release.py recorded for them (engines/adopted.py)
    added to each one's `runs`. A recorded run whose range no row has any more raises: it is never dropped."""
    from ..record import replace
    from .adopted import ADOPTED

    mine = [a for a in ADOPTED if a.engine == engine]
    if not mine:
        return rows
    out = []
    for row in rows:
        add = tuple(a.run for a in mine if a.family == row.family and a.first == row.first)
        out.append(replace(row, runs=row.runs + add) if add else row)
    held = {(r.family, r.first) for r in rows}
    families = {f for f, _first in held}
    lost = [a for a in mine if a.family in families and (a.family, a.first) not in held]
    if lost:
        raise LookupError(f"engines/adopted.py: no {engine} range for {[(a.family, a.first) for a in lost]} (renamed or split?)")
    return tuple(out)


ALL_ENGINES = ("sglang", "vllm", "trtllm")
# EAGLE-3's ranges (family "eagle3"), per engine: its loader eras, which place every family's version (Placement.era)
ENGINES: MutableMapping[str, tuple[FamilyRange, ...]] = EngineTable("ERAS", ALL_ENGINES)
CAPTURE: MutableMapping[str, tuple[CaptureRule, ...]] = EngineTable("CAPTURE", ALL_ENGINES)
LAUNCHERS: MutableMapping[str, Launcher] = EngineTable("LAUNCH", ALL_ENGINES)
# drafter families other than EAGLE-3, per engine: the release ranges that build them (an engine absent here, or
# with no rows, has no modelled class for any of them); `family_rows` gives one family's, EAGLE-3's from ENGINES
FAMILY_RANGES: MutableMapping[str, tuple[FamilyRange, ...]] = EngineTable("FAMILY_RANGES", ALL_ENGINES)
# plain draft models (vLLM method draft_model, SGLang STANDALONE): what each release range accepts and checks
DRAFT_MODEL: MutableMapping[str, tuple[DraftModelRange, ...]] = EngineTable("DRAFT_MODEL", ("vllm", "sglang"))
# how an engine release picks the speculative method a launch line does not name (vLLM: from the draft's path)
METHOD_INFERENCE: MutableMapping[str, tuple[MethodInference, ...]] = EngineTable("METHOD_INFERENCE", ("vllm",))
# how serve, sweep and bench run and read each live server; bench --engine auto probes them in this order
SERVERS: MutableMapping[str, Serving] = EngineTable("SERVE", ("vllm", "sglang"))
EAGLE3 = "eagle3"  # the family whose ranges are ENGINES' eras
ALIASES = {"tensorrt-llm": "trtllm", "tensorrt_llm": "trtllm", "trt-llm": "trtllm", "trt": "trtllm"}

# how a version was placed in its era
PINNED = "pinned"  # NAME==VERSION inside the modelled range
NEWEST = "newest"  # a bare engine name: the newest modelled release
NEWER = "newer"  # NAME==VERSION beyond the newest modelled release: checked against the newest era
PRERELEASE = "prerelease"  # rc/alpha/beta/dev: placed with the release it precedes
ALL = "all"  # one row of --engine all


class EngineSpecError(ValueError):
    pass


class Placement(namedtuple("Placement", "era version how requested row first", defaults=(None, None))):
    """One engine version to answer for a drafter of a family: the EAGLE-3 loader era the release falls in (`era`: the
    version rules read it), the version label shown, how it was placed and the spec it answers; `row`: the family's
    range that covers it (EAGLE-3: the era itself; None: the release has no class for the family) and `first`, the
    first release that has one (for the drafter's architecture, when one was given)."""

    # the fields and their types (collections.namedtuple: typing.NamedTuple imports typing, ~1 ms of a check)
    # era: FamilyRange
    # version: str
    # how: str
    # requested: str
    # row: FamilyRange | None = None
    # first: str | None = None

    __slots__ = ()


def newest_version(era: FamilyRange) -> str:
    return max(era.versions_read, key=lambda v: parse_version(v.split(" ")[0]))


def releases_read(era: FamilyRange) -> list[str]:
    """The releases whose loader source was read for this era (its placeholders are placed at, not read)."""
    return [v for v in era.versions_read if v not in era.placeholders]


def release_read(era: FamilyRange, version: str) -> bool:
    """Whether `version` lies between two releases read for its era (or is one): its loading is then known
    from both sides. A placeholder, a release before the first or after the last one read is not."""
    read = [parse_version(v.split(" ")[0]) for v in releases_read(era)]
    return bool(read) and min(read) <= parse_version(version) <= max(read)


def modelled_range(name: str) -> tuple[str, str]:
    """(first release modelled, newest release whose source was read) for one engine."""
    eras = ENGINES[name]
    return eras[0].min_version, newest_version(eras[-1])


def engine_name(spec: str) -> str:
    """The canonical engine name of 'SGLang==0.5.11', 'TensorRT-LLM', … (raises on unknown)."""
    name = ALIASES.get(spec.strip().lower().partition("==")[0].strip(), spec.strip().lower().partition("==")[0].strip())
    if name not in ENGINES:
        raise EngineSpecError(f"unknown engine {name!r}; known: {', '.join(ENGINES)} (or all)")
    return name


def split_specs(specs: str | list[str] | tuple[str, ...]) -> list[str]:
    """'sglang==0.5.11,vllm' and repeated --engine options -> ['sglang==0.5.11', 'vllm'] (every one kept)."""
    items = [specs] if isinstance(specs, str) else list(specs)
    out = [p.strip() for s in items for p in s.split(",") if p.strip()]
    if not out:
        raise EngineSpecError("no engine given (sglang, vllm, trtllm, NAME==VERSION, or all)")
    return out


def resolve(specs: str | list[str] | tuple[str, ...]) -> list[Placement]:
    """EAGLE-3's placements (`placements` of its eras): every requested engine version, in order, duplicates removed:
    'all', 'sglang', 'sglang==0.5.11', 'sglang==0.5.11,vllm' or a list of those."""
    return placements(specs)[0]


def _engine_asked(spec: str) -> str:
    """The engine a spec names ('all' aside), refusing what is neither NAME nor NAME==VERSION."""
    low = spec.strip().lower()
    if "==" not in low and any(op in low for op in ("=", ">", "<", "~", "@", " ")):
        raise EngineSpecError(f"cannot read engine {spec!r}: write NAME or NAME==VERSION (e.g. sglang==0.5.11)")
    return engine_name(low)


def _pinned(spec: str) -> Placement:
    """NAME==VERSION placed in its EAGLE-3 era (the loader era every family's version is read against)."""
    low = spec.strip().lower()
    name = _engine_asked(low)
    version = low.partition("==")[2].strip()
    eras = ENGINES[name]
    first, newest = modelled_range(name)
    if not version:  # `sglang==` is a pin with its version lost (an empty shell variable), not a bare name
        raise EngineSpecError(
            f"no version after '==' in {spec.strip()!r}: write {name}=={newest} (a release) or {name} (the newest modelled)"
        )
    try:
        release = parse_version(version)
    except ValueError:
        raise EngineSpecError(f"cannot read {name} version {version!r} (expected a release such as {newest})") from None
    era = next((e for e in eras if in_release_range(version, e.min_version, e.max_version)), None)
    if era is None:
        if release < parse_version(first):
            raise EngineSpecError(
                f"{name} {version} is older than the first release specbridge models (for any drafter family); modelled: {first} – {newest}"
            )
        raise EngineSpecError(
            f"{name} {version} is not a release we model (it falls between two modelled eras; modelled: {first} – {newest}; "
            f"`specbridge engines` lists them)"
        )
    if release > parse_version(newest):
        how = NEWER
    elif is_prerelease(version):
        how = PRERELEASE
    else:
        how = PINNED
    return Placement(era, version, how, spec)


def _at(rows, version: str):
    """The row whose [first, last] holds `version`; past the newest row, the newest (as `check` places newer
    releases); before the oldest, the oldest."""
    row = next((r for r in rows if in_release_range(version, r.first, r.last)), None)
    if row is None:
        row = rows[-1] if parse_version(version) >= parse_version(rows[-1].first) else rows[0]
    return row


def era_at(engine: str, version: str) -> FamilyRange:
    """The EAGLE-3 era of an engine that holds `version` (`_at`'s rule for one outside them all)."""
    return _at(ENGINES[engine], version)


def capture_rule(engine: str, version: str) -> CaptureRule:
    return _at(CAPTURE[engine], version)


def conformance_releases(engine: str, test: str, per_era: bool | None = None) -> list[str]:
    """The releases an engine table records conformance runs for (the eras' `runs` from `test`), in table order.

    `per_era` (default: SPECBRIDGE_CONFORMANCE=per-era in the environment) keeps only the newest run release of
    each era: what CI installs and reruns to stay inside its time budget; the full list is the default elsewhere."""
    import os

    if per_era is None:
        per_era = os.environ.get("SPECBRIDGE_CONFORMANCE", "all") == "per-era"
    out: list[str] = []
    for era in ENGINES[engine]:
        rel = [r.release for r in era.runs if r.test == test]
        if per_era and rel:
            rel = [max(rel, key=parse_version)]
        out += [r for r in rel if r not in out]
    return out


def newest_in_ci(releases: list[str]) -> list[str]:
    """The releases a drafter-family conformance matrix reruns: all it is given, or under SPECBRIDGE_CONFORMANCE=per-era
    (what CI sets, to stay inside its time budget on 2 cores) the newest only. The runs on the others stay recorded
    as Run rows (and stored observations) and rerun with SPECBRIDGE_CONFORMANCE=all (docs/engines.md)."""
    import os

    if os.environ.get("SPECBRIDGE_CONFORMANCE", "all") != "per-era" or not releases:
        return list(releases)
    return [max(releases, key=parse_version)]


def family_rows(engine: str, family: str) -> list[FamilyRange]:
    """An engine's rows for one drafter family, oldest first (none: the engine models no class of it); EAGLE-3's are
    its eras. Read from the family's own files of the engine's package (its `family_ranges`), so a check of one
    family imports no other family's rows; a table replaced whole (FAMILY_RANGES[engine] = …, the benchmark's copies)
    is read as it is."""
    if family == EAGLE3:
        return list(ENGINES.get(engine, ()))
    if engine not in FAMILY_RANGES:
        return []
    if not FAMILY_RANGES.replaced(engine):
        key = (engine, family)
        if key not in _FAMILY_ROWS:
            pkg = importlib.import_module(f"{__package__}.{engine}")
            rows = pkg.family_ranges(family) if family in pkg.FAMILY_MODULES else ()
            _FAMILY_ROWS[key] = with_adopted(engine, rows)
        return list(_FAMILY_ROWS[key])
    return [r for r in FAMILY_RANGES[engine] if r.family == family]


_FAMILY_ROWS: dict[tuple[str, str], tuple[FamilyRange, ...]] = {}  # (engine, family) -> its rows, read once


def family_era(row: FamilyRange) -> str:
    """The name a release range goes by wherever it is shown (`check`'s era column, `specbridge engines`): its own
    `name` (an EAGLE-3 era's words), else the family and its span, "dflash 0.31.0+" or "mtp 0.16.0–0.16"."""
    if row.name:
        return row.name
    return f"{row.family} {row.first}–{row.last}" if row.last else f"{row.family} {row.first}+"


def family_name(row: FamilyRange, arch: str) -> str:
    """Architecture `arch` as `row`'s registry is asked for it (after the engine's own renaming: vLLM's Eagle / DFlash
    prefixes)."""
    d = row.dispatch
    p = d.rewrite_prefix
    if p and not (arch.startswith(p) or (d.rewrite_keeps_suffix and arch.endswith(p))):
        return p + arch
    return arch


def family_builds(row: FamilyRange, arch: str | None) -> str | None:
    """The class `row`'s registry builds for architecture `arch` (after the engine's own renaming, vLLM's DFlash
    prefix), or None: the releases of the row have no class for that name."""
    d = row.dispatch
    if not arch:
        return None
    if "*" in d.registry:
        return d.registry["*"]
    return d.registry.get(family_name(row, arch))


def arch_first(rows: list[FamilyRange], arch: str | None) -> FamilyRange | None:
    """The oldest row whose registry has a class for `arch` (None: no row has one, or no architecture)."""
    return next((r for r in rows if family_builds(r, arch) is not None), None)


class NotModelled(EngineSpecError):
    """The engine (or this release of it) builds the family, but specbridge has no rows for its loader."""


class NoFamilyClass(EngineSpecError):
    """This release of the engine has no class for the family (a later one has, unmodelled): exit 1, as L005 says it
    for a family whose class is modelled."""

    exit_code = 1


def placements(
    specs: str | list[str] | tuple[str, ...], family: str = EAGLE3, title: str = "EAGLE-3", arch: str | None = None
) -> tuple[list[Placement], list[str]]:
    """The engine versions to answer for a drafter of `family` (EAGLE-3 by default), in order, duplicates removed, and
    a line for each engine skipped because no row models the family there. `all` means every modelled range of the
    family, each at its newest release read (EAGLE-3: every era); a bare engine name the same on that engine, except
    for EAGLE-3, answered by its newest era alone; a pinned version is placed in its EAGLE-3 era (`_pinned`, whose
    errors hold for every family) and answered by the family's range holding it.
    `arch`: the drafter's architecture; a pinned release in a range not modelled that is older than the first whose
    registry names it (vLLM's DFlashLagunaForCausalLM arrives after DFlashDraftModel) has no class for it: answered
    as such (L005), not refused as not modelled."""
    out: list[Placement] = []
    skipped: list[str] = []
    for spec in split_specs(specs):
        every = spec.strip().lower() == "all"
        names = list(ENGINES) if every else [_engine_asked(spec)]
        pinned = "==" in spec
        for name in names:
            rows = family_rows(name, family)
            modelled = [r for r in rows if r.classes]
            if not modelled:
                said = next((r for r in rows if r.absent or r.unmodelled), None)
                if said is None:
                    why = f"specbridge does not model {title} drafters on {name} yet: nothing was checked there"
                elif said.absent:
                    why = f"{name} has no {title} drafter class ({said.absent}): nothing was checked there"
                else:  # the engine has the class from rows[0].first: say so, release by release when pinned
                    why = f"{name}: {said.unmodelled}; nothing was checked there"
                    if pinned and len(names) == 1:
                        p = _pinned(spec)
                        why = f"{name} {p.version}: {said.unmodelled}; nothing was checked"
                        if not any(in_release_range(p.version, r.first, r.last) for r in rows) and parse_version(p.version) < parse_version(
                            rows[0].first
                        ):
                            raise NoFamilyClass(
                                f"L005 {name} {p.version} has no {title} drafter class (the first release with one is "
                                f"{rows[0].first}, which specbridge does not model yet)"
                            )
                if len(names) == 1:
                    raise NotModelled(why)
                skipped.append(why)
                continue
            first = rows[0].first
            by_arch = arch_first(rows, arch)
            if by_arch is not None:
                first = by_arch.first
            found: list[Placement] = []
            if not pinned:
                skipped += [f"{name} {r.first}–{r.last or ''}: {r.unmodelled}" for r in rows if r.unmodelled and len(names) > 1]
                for r in modelled if every or family != EAGLE3 else modelled[-1:]:
                    v = newest_version(r)
                    era = r if family == EAGLE3 else era_at(name, v)
                    found.append(Placement(era, v, ALL if every else NEWEST, spec, r, first))
            else:
                p = _pinned(spec)
                row = next((r for r in rows if in_release_range(p.version, r.first, r.last)), None)
                if row is None and parse_version(p.version) > parse_version(rows[-1].first):
                    row = rows[-1]
                if (
                    row is not None
                    and by_arch is not None
                    # a range not modelled, or a modelled one whose releases lack the class itself (not only this name
                    # for it: a new alias of a class the range has is simulated as that class)
                    and (
                        row.unmodelled
                        or (
                            family_builds(row, arch) is None
                            and family_builds(by_arch, arch) not in row.classes
                            # a name the range lists as not modelled is a class its releases have (MTP's Qwen3.5 on 0.16)
                            and arch not in row.unmodelled_archs
                            and family_name(row, arch) not in row.unmodelled_archs
                        )
                    )
                    and parse_version(p.version) < parse_version(by_arch.first)
                    and row.dispatch.rewrite_prefix == by_arch.dispatch.rewrite_prefix  # its registry reads names alike
                ):
                    row = None  # releases with no class for this architecture anyway (L005)
                if row is not None and row.unmodelled:
                    raise NotModelled(f"{name} {p.version}: {row.unmodelled}; nothing was checked")
                found.append(p._replace(row=row, first=first))
            out += [p for p in found if not any(q.era is p.era and q.version == p.version and q.row is p.row for q in out)]
    return out, skipped


class DraftModelPlace(namedtuple("DraftModelPlace", "engine version row how")):
    """One engine version to answer for a plain draft model, the row that covers it (None: the release is older
    than every row read) and how it was asked for (PINNED, NEWER, NEWEST, ALL, PRERELEASE)."""

    # the fields and their types (collections.namedtuple: typing.NamedTuple imports typing, ~1 ms of a check)
    # engine: str
    # version: str
    # row: DraftModelRange | None
    # how: str

    __slots__ = ()


def draft_model_places(specs: str | list[str]) -> tuple[list[DraftModelPlace], list[str]]:
    """The engine versions a plain draft model is checked for, and a line per engine skipped (no rows). `all`: the
    newest release read of every range that serves the method; a bare name: the newest range's; NAME==VERSION: the
    row holding it (a release past the newest read: the newest row)."""
    out: list[DraftModelPlace] = []
    skipped: list[str] = []
    for spec in split_specs(specs):
        low = spec.strip().lower()
        names = list(ENGINES) if low == "all" else [engine_name(low)]
        for name in names:
            rows = DRAFT_MODEL.get(name, ())
            if not rows:
                why = f"specbridge has no draft-model rows for {name}: nothing was checked there"
                if len(names) == 1:
                    raise NotModelled(why)
                skipped.append(why)
                continue
            version = low.partition("==")[2].strip()
            if "==" in low and not version:
                raise EngineSpecError(f"no version after '==' in {spec.strip()!r}")
            if not version:
                how = ALL if len(names) > 1 else NEWEST
                serving = [r for r in rows if r.method]  # a release range without the method is answered only when named
                out += [DraftModelPlace(name, r.versions_read[-1], r, how) for r in (serving if how == ALL else serving[-1:])]
                continue
            try:
                release = parse_version(version)
            except ValueError:
                raise EngineSpecError(f"cannot read {name} version {version!r}") from None
            row = next((r for r in rows if in_release_range(version, r.first, r.last)), None)
            if row is None and release > parse_version(rows[-1].first):
                row = rows[-1]
            newer = row is rows[-1] and release > parse_version(rows[-1].versions_read[-1])
            how = NEWER if newer else PRERELEASE if is_prerelease(version) else PINNED
            out.append(DraftModelPlace(name, version, row, how))
    return out, skipped


def method_inference(engine: str, version: str) -> MethodInference | None:
    """The row that says how this engine release picks a method the launch line does not name; None when the engine
    needs it named or the release is older than every one read (a release past the newest read: the newest row)."""
    rows = METHOD_INFERENCE.get(engine, ())
    row = next((r for r in rows if in_release_range(version, r.first, r.last)), None)
    return row
