"""The vocabulary of engine tables: what a drafter class is and how its loader maps names.

Every table row is data (names, shape expressions, rename lines) with the engine file and version it
mirrors. `simulate.py` interprets them; nothing engine-specific lives in code.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Field:
    """A config value as this engine reads it: first present source wins, else default.

    A source is a key path (`eagle_config.eagle_aux_hidden_state_layer_ids`), optionally `len:`-prefixed.
    `required` is the message the engine raises when no source is present.
    """

    name: str
    sources: tuple[str, ...]
    default: object = None
    required: str | None = None
    keep_null: bool = False  # a present-but-null value counts as present (SGLang's draft_vocab_size)
    kind: str = "int"  # "int" (0 <= v < 2**40) | "bool"; anything else in the config is reported, not used


@dataclass(frozen=True)
class Derive:
    name: str
    expr: str


@dataclass(frozen=True)
class Raise:
    """The engine raises `message` while building the class when `when` holds."""

    when: str
    message: str
    cite: str


@dataclass(frozen=True)
class Param:
    """One parameter of the engine's class, in the engine's own naming.

    `name` may contain `{i}` (one per draft layer). `shards` maps a shard id to its shape for fused
    parameters (qkv_proj, gate_up_proj); otherwise `shape` is used. `share` names the post-load rule
    that may replace this parameter with the target's ("embed" / "head").
    """

    name: str
    shape: tuple[str, ...] = ()
    shards: tuple[tuple[str, tuple[str, ...]], ...] = ()
    when: str = "True"
    per_layer: bool = False
    share: str | None = None
    role: str = ""  # human words: "decoder", "fc", "norm", "embed", "head", "vocab map"
    missing_ok: str = "False"  # when nothing fills it, is its initial value harmless?
    missing_note: str = ""
    # when nothing fills it, does it keep a small default initialisation (nn.Linear's bias: U(±1/sqrt(in)))
    # rather than a random matrix? The loss is a small constant offset: a warning, not a random layer
    missing_small: str = "False"
    tp_dim: int | None = None  # the dimension a tensor-parallel loader narrows
    pads: bool = False  # a narrower checkpoint along tp_dim is zero-padded (when the class pads at all)


@dataclass(frozen=True)
class Step:
    """One line of a loader's name pipeline, like vLLM's WeightsMapper.

    ops:
      drop       a          names containing `a` are consumed and unused (reason `why`)
      buffer     a -> b     names containing `a` fill non-parameter state `b` (e.g. hot_token_id)
      rename_if  a -> b     names containing `a` become `b` and skip the remaining steps
      substr     a -> b     replace substring
      regex      a -> b     re.sub
      prefix     a unless b add prefix `a` unless the name contains `b`
      prefix_if_not_param a add prefix `a` unless the name already is a parameter
      stack      a -> b [c] `a` becomes `b`, filling shard `c` of the fused parameter
      ignore_suffix a       unknown names ending in `a` are skipped without error
    """

    op: str
    a: str = ""
    b: str = ""
    c: str = ""
    why: str = ""
    cite: str = ""
    when: str = "True"  # the step applies only when this holds (config-dependent loaders)


@dataclass(frozen=True)
class DraftClass:
    """An engine's EAGLE-3 drafter class in one version range."""

    name: str
    file: str
    fields: tuple[Field, ...]
    derive: tuple[Derive, ...]
    params: tuple[Param, ...]
    loader: tuple[Step, ...]
    unknown: str  # "skip" | "warn" | "raise"
    unknown_message: str = ""  # template, {name} {component} {module}
    missing: str = "silent"  # how the engine treats parameters nothing fills
    raises: tuple[Raise, ...] = ()
    # post-load sharing with the target: expression -> "target" | "own" | "own-unless-equal"
    share_embed: str = "'own'"
    share_head: str = "'own'"
    share_cite: str = ""
    notes: tuple[str, ...] = ()
    # what the loader does when a tensor disagrees with a parameter along its tp_dim only:
    # "raise" (a size mismatch), or SGLang's narrow()/pad_or_narrow_weight behaviour
    wider_tp: str = "raise"  # "raise" | "truncate"
    narrower_tp: str = "raise"  # "raise" | "pad" (for params with pads=True; the rest raise)


@dataclass(frozen=True)
class Dispatch:
    """How an engine version turns a draft config.json into a class."""

    style: str  # "sglang" (architectures[0] lookup) | "vllm" | "trtllm"
    registry: dict[str, str]  # architecture string -> DraftClass name
    fallback: str  # class to simulate with when dispatch fails
    speculators: bool = False  # understands speculators-format configs
    speculators_required: tuple[str, ...] = ()  # key paths validate_speculators_config requires
    speculators_arch_by_model_type: dict[str, str] = field(default_factory=dict)
    speculators_defaults: dict[str, object] = field(default_factory=dict)
    cite: str = ""
    # what the engine raises for an architecture it has no class for ({archs}, {arch})
    unknown_message: str = ""
    # ordinary (target) model classes the engine registers: a draft config naming one is built as that plain
    # model, which loads and then fails in the speculative worker with `plain_message` ({arch})
    plain_classes: tuple[str, ...] = ()
    plain_message: str = ""


@dataclass(frozen=True)
class Era:
    """A version range of one engine in which the loading behaviour is the same."""

    engine: str
    name: str
    min_version: str  # inclusive
    max_version: str | None  # inclusive upper bound known to behave like this (None = newest)
    versions_read: tuple[str, ...]  # releases whose source we actually read for this era
    dispatch: Dispatch
    classes: dict[str, DraftClass]
    notes: tuple[str, ...] = ()


def parse_version(v: str) -> tuple[int, int, int]:
    """The release a PEP 440 version string belongs to: '0.5.11rc2', '0.5.11.post1', '0.5.11+cu124' and
    'v0.5.11' all -> (0, 5, 11); '0.14' -> (0, 14, 0).

    Engine behaviour changes between releases, so eras and "since" rows are bounded by releases: a
    post-release or a local build (+cu124) of X behaves as X, and a pre-release (rc, a, b, dev) is the
    code of the release it precedes (`resolve` says so in a finding). Raises ValueError on anything
    that is not a PEP 440 version."""
    from packaging.version import InvalidVersion, Version

    try:
        release = Version(v.strip()).release
    except InvalidVersion:
        raise ValueError(f"not a version: {v!r}") from None
    return (*release[:3], *(0,) * (3 - len(release[:3])))  # type: ignore[return-value]


def in_release_range(version: str, first: str, last: str | None) -> bool:
    """Whether `version` lies in [first, last] by release. `last` covers every patch it leaves open:
    '0.31' is every 0.31.x, '0.5.11' every 0.5.11 build (post-releases, local tags)."""
    v = parse_version(version)
    if v < parse_version(first):
        return False
    if last is None:
        return True
    n = len(last.strip().lstrip("v").split("+")[0].split("."))
    return v[: min(n, 3)] <= parse_version(last)[: min(n, 3)]


def is_prerelease(version: str) -> bool:
    from packaging.version import Version

    return Version(version.strip()).is_prerelease
