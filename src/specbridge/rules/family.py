"""L017: a checkpoint whose architecture name says one drafter family over another family's tensors. Engines build
the class they dispatch on the name, so `check` simulates exactly that (the family the name belongs to, that engine
release's class) and this rule says what the tensors are, what the engine does with them, and the fix: the other
family's architecture name and launch method."""

from __future__ import annotations

from collections.abc import Iterator

from ..engines.registry import DRAFT_MODEL, LAUNCHERS, era_at, family_rows, releases_read
from ..engines.spec import in_release_range
from ..families.table import BY_NAME, Family
from .context import Context
from .findings import ERROR
from .registry import EVERY_FAMILY, Hit, rule


@rule(
    "L017",
    "architecture name of one drafter family over another family's tensors",
    severity=ERROR,
    families=EVERY_FAMILY,
    fix="write the architecture of the family the tensors are (config.json `architectures`) and launch with that "
    "family's method; the finding names both for the engine version.",
)
def mislabelled(c: Context) -> Iterator[Hit]:
    """The config's `architectures[0]` belongs to one family (an EAGLE-3 class name, say) while the tensors' whole
    structure is another's (DFlash's model-level hidden_norm and single-width q_proj; EAGLE-1's fc over embedding and
    feature). SGLang builds the class its registry has for `architectures[0]`; vLLM the class its registry has for the
    name after its method's rewrite (`Eagle3…`, `DFlash…`): the name decides, not the tensors. `check` therefore
    simulates that class, as the engine does, and the rest of the report is its outcome: most often a size mismatch at
    load (an EAGLE-3 layer reads 2× hidden, a DFlash layer 1×), else tensors dropped or parameters left random. This
    finding says which family the tensors show, what that release does with them, and the fix. How the outcome is
    known is said per release: **run** or **read** where the class's loader was run or read at that release, else
    **inferred**; the mislabelled checkpoint itself is predicted from those rows.

    The same holds inside one checkpoint: an EAGLE-3 layout (per-layer hidden_norm, a layer reading 2× hidden) whose
    fc reads another number of states than the class builds (3, or as many as the config's aux ids say) is an fc of
    another kind, most often EAGLE-1's over (embedding, feature), [H, 2H] with a bias. The engine builds its EAGLE-3 fc
    and the load raises a size mismatch (L003); this finding names the fc's kind and the two ways out.
    """
    if c.rep is None:
        return
    yield from other_fc(c)
    mis = c.view.verdict.mislabel
    if mis is None:
        return
    named, shown = BY_NAME[mis.named], BY_NAME[mis.shown]
    rep = c.rep
    built = f"{c.eng} builds {rep.cls.name}" if rep.dispatched else f"{c.eng} has no class for that name (L005)"
    yield Hit(
        ERROR,
        f"architectures[0] {mis.arch!r} names the {named.short} family, so {built}, but the tensors are {shown.short} "
        f"tensors ({'; '.join(mis.evidence)}): {outcome(c)} [{how_known(c, named)}].",
        fix_line(c, shown, rep.engine, rep.version),
    )


def other_fc(c: Context) -> Iterator[Hit]:
    """An EAGLE-3 layout whose fc reads a number of states the dispatched EAGLE-3 class does not build (L017's second case)."""
    if not c.fam.fc_over_aux or c.view.verdict.mislabel is not None or not c.k:
        return
    built = c.rep.ns.get("n_aux", 3)
    if type(built) is not int or c.k >= built:  # a wider fc is an EAGLE-3 fc over more layers (G008, L003 say so)
        return
    bias = "fc.bias" in {n.removeprefix("model.") for n in c.ckpt.tensors}
    kind = "EAGLE-1's fc over (embedding, feature)" if c.k == 2 else "an fc over one state (EAGLE-1's reads two: embedding, feature)"
    by_count = any(f.name == "n_aux" and f.sources for f in c.rep.cls.fields)  # the class sizes fc by the aux ids
    fix = (
        f"if it was trained on {c.k} target layer(s), list them in eagle_aux_hidden_state_layer_ids ({c.rep.cls.name} sizes fc by their count); "
        if by_count
        else f"{c.rep.cls.name} always builds fc over {built} states: "
    )
    yield Hit(
        ERROR,
        f"the layers are EAGLE-3's but fc [{c.d.hidden_size}, {c.d.fc_in}]{' with a bias' if bias else ''} reads {c.k}× the "
        f"target's hidden size, {kind}, where {c.rep.cls.name} on {c.eng} builds fc over {built}: {outcome(c)} "
        f"[{how_known(c, BY_NAME['eagle3'])}].",
        fix
        + "an EAGLE-1 drafter is served whole as one (architectures ['EagleLlamaForCausalLM'], method eagle), not with an EAGLE-3 decoder",
    )


def outcome(c: Context) -> str:
    """What the simulated load of the dispatched class does with these tensors, in one clause."""
    rep = c.rep
    if rep.errors:
        more = f" (+{len(rep.errors) - 1} more)" if len(rep.errors) > 1 else ""
        return f"the load raises: {rep.errors[0]}{more}"
    if rep.dropped or rep.missing:
        return (
            f"it loads as a {c.view.verdict.family.title} network with {len(rep.dropped)} tensor(s) dropped and "
            f"{len(rep.missing)} parameter(s) left at their initial values"
        )
    return f"every tensor fills a {rep.cls.name} parameter, but runs as a {c.view.verdict.family.title} network, not as trained"


def how_known(c: Context, named: Family) -> str:
    """run / read / inferred: how this release's behaviour for the dispatched class is known (the engine rows)."""
    rep = c.rep
    if named.checker == "eras":  # EAGLE-3: the engine's loader era
        era = era_at(rep.engine, rep.version)
        runs, read = [r.release for r in era.runs], releases_read(era)
    else:
        rows = [r for r in family_rows(rep.engine, named.name) if in_release_range(rep.version, r.first, r.last)]
        runs = [r.release for row in rows for r in row.runs]
        read = [v for row in rows for v in row.versions_read]
    if rep.version in runs:
        how = "run"
    elif rep.version in read:
        how = "read"
    else:
        how = "inferred"
    return f"{rep.engine} {rep.version}'s {rep.cls.name}: {how}; this checkpoint: predicted from those rows, not run"


def fix_line(c: Context, shown: Family, engine: str, version: str) -> str:
    """The other family's architecture name this release builds, and its launch method."""
    if shown.checker == "draft_model":  # a whole causal LM: served as a draft model, under its own class's name
        rows = [r for r in DRAFT_MODEL.get(engine, ()) if r.method]  # the word each release range asks for it with
        plain = method_words(engine, rows[-1].method) if rows else "its draft-model method"
        return (
            f"write the causal LM's own architecture (LlamaForCausalLM for a Llama) in config.json and launch it as a draft model ({plain})"
        )
    arch = shown_architecture(shown, engine, version, (c.ckpt.config or {}).get("model_type"))
    method = launch_method(shown, engine)
    where = f"write architectures [{arch!r}] in config.json" if arch else f"give it the architecture of a {shown.title} drafter"
    if arch is None and not any(family_rows(engine, shown.name)) and shown.checker != "eras":
        return f"{engine} has no {shown.title} drafter class: serve the tensors on an engine that has one (specbridge engines)"
    return f"{where} (the {shown.title} class {engine} {version} builds) and launch with {method}"


def shown_architecture(fam: Family, engine: str, version: str, model_type) -> str | None:
    """An architecture name the release's registry builds a class of `fam` for, preferring one that names the
    config's model_type (a Qwen3 drafter's Eagle3Qwen3ForCausalLM), then the family table's first name."""
    if fam.checker == "eras":
        registry = era_at(engine, version).dispatch.registry
    else:
        rows = family_rows(engine, fam.name)
        row = next((r for r in rows if in_release_range(version, r.first, r.last)), rows[-1] if rows else None)
        if row is None or not row.classes:
            return None
        registry = row.dispatch.registry
    names = [a for a in registry if a != "*"]
    if not names:
        return fam.architectures[0] if fam.architectures else None
    word = str(model_type or "").replace("_", "").lower()
    typed = sorted((a for a in names if word and word in a.lower()), key=len)  # Eagle3Qwen3ForCausalLM before …vl…
    return typed[0] if typed else next((a for a in fam.architectures if a in names), names[0])


def launch_method(fam: Family, engine: str) -> str:
    """How the engine's launch line names `fam`'s method (its LAUNCH row: the family's spec_method, else the family's)."""
    launcher = LAUNCHERS.get(engine)
    if launcher is not None and fam.checker == "eras":  # the EAGLE-3 line's own method (TensorRT-LLM: Eagle)
        return method_words(engine, launcher.eagle3_method)
    row = launcher.families.get(fam.name) if launcher is not None else None
    return method_words(engine, row.spec_method if row is not None and row.spec_method else fam.method)


def method_words(engine: str, method: str) -> str:
    """A speculative method as the engine's launch line writes it: an algorithm flag (SGLang's
    --speculative-algorithm), a JSON speculative config's "method" (vLLM), or a config file's key (TensorRT-LLM)."""
    launcher = LAUNCHERS.get(engine)
    if launcher is None:
        return f"method {method}"
    flag = next((f for f, attr in launcher.flags.items() if attr == "algorithm"), None)
    if flag:
        return f"{flag} {method.upper()}"
    if launcher.spec_config_flags:
        return f'"method": "{method.lower()}" in {launcher.spec_config_flags[0]}'
    if launcher.spec_file is not None:
        return f"{launcher.spec_file.method_key}: {method} in {launcher.spec_file.name}"
    return f"method {method}"
