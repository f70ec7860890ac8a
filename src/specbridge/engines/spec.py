"""The vocabulary of engine tables: what a drafter class is and how its loader maps names.

Every table row is data (names, shape expressions, rename lines) with the engine file and version it
mirrors. `simulate.py` interprets them; nothing engine-specific lives in code.
"""

from __future__ import annotations

from functools import lru_cache

from ..record import field, record


@record
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


@record
class Derive:
    name: str
    expr: str


@record
class Raise:
    """The engine raises `message` while building the class when `when` holds."""

    when: str
    message: str
    cite: str


@record
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
    # a file beside the weights the loader reads into this parameter itself (DFlash's mask_embedding.pt): filled
    # by it, not by a checkpoint tensor
    side_file: str = ""
    tp_dim: int | None = None  # the dimension a tensor-parallel loader narrows
    pads: bool = False  # a narrower checkpoint along tp_dim is zero-padded (when the class pads at all)
    # a whole submodule built from the target's own decoder-layer class (an MTP layer's `mtp_block`): `name` is its
    # prefix (written with a trailing `*`), and any tensor whose engine name starts with it fills it. Its tensors are counted, not shape-checked
    # one by one: the target's layer loader (experts, fused projections, quantization scales) reads them
    group: bool = False
    # a group's submodules: a name under the prefix whose next part is none of these is unknown to the module (the
    # class's `unknown` behaviour decides), as `model.decoder.foo.weight` is to SGLang's NextN decoder; () = any
    group_parts: tuple[str, ...] = ()
    # a plain torch parameter (a norm, an nn.Linear) rather than one whose module has a quantization method: the
    # parameters vLLM's DefaultModelLoader names when nothing filled them (DraftClass.unfilled_when)
    plain: bool = False
    # a fused routed-expert parameter (vLLM's FusedMoE w13_weight / w2_weight): an expression for the expert count;
    # `shards` then describe one expert, and the parameter has them once per expert id ("{id}.{shard}", or "{id}" for a
    # shard named ""), each filled by that expert's own tensor (ExpertShard): an expert no tensor reaches stays unfilled
    experts: str = ""
    # fused shards the loader writes together, only once every one was read (SGLang's DeepSeek
    # fused_qkv_a_proj_with_mqa caches q_a_proj until kv_a_proj_with_mqa arrives): with one missing, none is written
    whole: bool = False


@record
class Step:
    """One line of a loader's name pipeline, like vLLM's WeightsMapper.

    ops:
      drop       a          names containing `a` are consumed and unused (reason `why`)
      buffer     a -> b     names containing `a` fill non-parameter state `b` (e.g. hot_token_id)
      rename_if  a -> b     names containing `a` become `b` and skip the remaining steps
      substr     a -> b     replace substring
      regex      a -> b     re.sub (`{name}` in `b` is the config value the class reads under that name)
      prefix     a unless b add prefix `a` unless the name contains `b`
      prefix_if_not_param a add prefix `a` unless the name already is a parameter
      stack      a -> b [c] `a` becomes `b`, filling shard `c` of the fused parameter
      ignore_suffix a       unknown names ending in `a` are skipped without error
      skip_unless a         names regex `a` does not find are skipped: never read
      keep_layers a b c     names whose layer number (regex `a`, group 1) is outside the class's own layers
                            (`b` + range(`c`): an MTP head's layers after the target's) are skipped: never read
    """

    op: str
    a: str = ""
    b: str = ""
    c: str = ""
    why: str = ""
    cite: str = ""
    when: str = "True"  # the step applies only when this holds (config-dependent loaders)


# --- loader rows as a newcomer reads them (in the spirit of vLLM's WeightsMapper) ----------------------
# Each is a Step with its op fixed and its operands named; simulate.py interprets them as Steps.


def _kw_repr(self) -> str:
    args = ", ".join(f"{k}={v!r}" for k, v in self._view().items() if v not in ("", "True") or k in self._required)
    return f"{type(self).__name__}({args})"


class Rename(Step):
    """Every name containing `old` has it replaced by `new` (`Rename(old="midlayer.", new="layers.0.")`)."""

    _required = ("old", "new")

    def __init__(self, old: str, new: str, *, cite: str = "", when: str = "True"):
        Step.__init__(self, "substr", old, new, cite=cite, when=when)

    def _view(self):
        return {"old": self.a, "new": self.b, "when": self.when, "cite": self.cite}

    __repr__ = _kw_repr


class RenameRegex(Step):
    r"""`re.sub(pattern, new, name)` (`RenameRegex(pattern=r"^layers\.0\.", new="midlayer.")`)."""

    _required = ("pattern", "new")

    def __init__(self, pattern: str, new: str, *, cite: str = "", when: str = "True"):
        Step.__init__(self, "regex", pattern, new, cite=cite, when=when)

    def _view(self):
        return {"pattern": self.a, "new": self.b, "when": self.when, "cite": self.cite}

    __repr__ = _kw_repr


class RenameTo(Step):
    """A name containing `contains` becomes exactly `to`, and no later row applies (`d2t` -> `draft_id_to_target_id`)."""

    _required = ("contains", "to")

    def __init__(self, contains: str, to: str, *, cite: str = "", when: str = "True"):
        Step.__init__(self, "rename_if", contains, to, cite=cite, when=when)

    def _view(self):
        return {"contains": self.a, "to": self.b, "when": self.when, "cite": self.cite}

    __repr__ = _kw_repr


class Drop(Step):
    """Names containing `contains` are consumed on purpose and unused: `Drop("t2d", why="SGLang never uses t2d")`."""

    _required = ("contains", "why")

    def __init__(self, contains: str, *, why: str, cite: str = "", when: str = "True"):
        Step.__init__(self, "drop", contains, why=why, cite=cite, when=when)

    def _view(self):
        return {"contains": self.a, "why": self.why, "when": self.when, "cite": self.cite}

    __repr__ = _kw_repr


class Buffer(Step):
    """Names containing `contains` fill non-parameter state `into` (`Buffer("d2t", into="hot_token_id")`)."""

    _required = ("contains", "into")

    def __init__(self, contains: str, *, into: str, why: str = "", cite: str = "", when: str = "True"):
        Step.__init__(self, "buffer", contains, into, why=why, cite=cite, when=when)

    def _view(self):
        return {"contains": self.a, "into": self.b, "why": self.why, "when": self.when, "cite": self.cite}

    __repr__ = _kw_repr


class Prefix(Step):
    """Add `prefix` to every name that does not contain `unless` (`Prefix("model.", unless="lm_head")`)."""

    _required = ("prefix", "unless")

    def __init__(self, prefix: str, *, unless: str, cite: str = "", when: str = "True"):
        Step.__init__(self, "prefix", prefix, unless, cite=cite, when=when)

    def _view(self):
        return {"prefix": self.a, "unless": self.b, "when": self.when, "cite": self.cite}

    __repr__ = _kw_repr


class PrefixUnlessParam(Step):
    """Add `prefix` unless the name already is one of the class's parameters (SGLang's load_weights)."""

    _required = ("prefix",)

    def __init__(self, prefix: str, *, cite: str = "", when: str = "True"):
        Step.__init__(self, "prefix_if_not_param", prefix, cite=cite, when=when)

    def _view(self):
        return {"prefix": self.a, "when": self.when, "cite": self.cite}

    __repr__ = _kw_repr


class Stack(Step):
    """`old` becomes `fused`, filling its shard `shard` (`Stack(".q_proj", fused=".qkv_proj", shard="q")`)."""

    _required = ("old", "fused", "shard")

    def __init__(self, old: str, *, fused: str, shard: str, cite: str = "", when: str = "True"):
        Step.__init__(self, "stack", old, fused, shard, cite=cite, when=when)

    def _view(self):
        return {"old": self.a, "fused": self.b, "shard": self.c, "when": self.when, "cite": self.cite}

    __repr__ = _kw_repr


class ExpertShard(Step):
    r"""A routed expert's tensor fills its slice of the fused expert parameter: a name `pattern` finds (group 1: the
    expert id) becomes `re.sub(pattern, fused)` and fills shard "{id}.{shard}" ("{id}" for shard "") of it, as vLLM's
    FusedMoE.make_expert_params_mapping pairs `experts.{id}.gate_proj.` with `experts.w13_` (shard w1, expert id)."""

    _required = ("pattern", "fused", "shard")

    def __init__(self, pattern: str, *, fused: str, shard: str, cite: str = "", when: str = "True"):
        Step.__init__(self, "expert", pattern, fused, shard, cite=cite, when=when)

    def _view(self):
        return {"pattern": self.a, "fused": self.b, "shard": self.c, "when": self.when, "cite": self.cite}

    __repr__ = _kw_repr


class IgnoreSuffix(Step):
    """Names no parameter takes that end in `suffix` are skipped without error (vLLM's ignore_unexpected_suffixes)."""

    _required = ("suffix", "why")

    def __init__(self, suffix: str, *, why: str, cite: str = "", when: str = "True"):
        Step.__init__(self, "ignore_suffix", suffix, why=why, cite=cite, when=when)

    def _view(self):
        return {"suffix": self.a, "why": self.why, "when": self.when, "cite": self.cite}

    __repr__ = _kw_repr


class KeepLayers(Step):
    r"""Only the class's own layers are read: a name whose layer number (`pattern`, group 1) is outside
    `first + range(count)`, or that does not match at all, is skipped without a word (vLLM's MTP loaders:
    `get_spec_layer_idx_from_weight_name` is None → `continue`). `first` and `count` name values of the class's
    namespace (`mtp_base`, `L`)."""

    _required = ("pattern", "first", "why")

    def __init__(self, pattern: str, *, first: str, why: str, count: str = "L", cite: str = "", when: str = "True"):
        Step.__init__(self, "keep_layers", pattern, first, count, why=why, cite=cite, when=when)

    def _view(self):
        return {"pattern": self.a, "first": self.b, "count": self.c, "why": self.why, "when": self.when, "cite": self.cite}

    __repr__ = _kw_repr


class SkipUnless(Step):
    r"""A name the pattern does not find is skipped without a word (`SkipUnless(r"^mtp\.|embed_tokens|lm_head", why=…)`:
    Qwen3-Next's `is_unused_checkpoint_weight`): the loader never reads it."""

    _required = ("pattern", "why")

    def __init__(self, pattern: str, *, why: str, cite: str = "", when: str = "True"):
        Step.__init__(self, "skip_unless", pattern, why=why, cite=cite, when=when)

    def _view(self):
        return {"pattern": self.a, "why": self.why, "when": self.when, "cite": self.cite}

    __repr__ = _kw_repr


@record
class Run:
    """A conformance run: the engine's real loader code executed on every case of a test's matrix, and
    `check` agreeing with it (`agreed` of `cases`; the rest are strict xfails named in that test)."""

    release: str
    date: str  # UTC day of the run
    test: str  # the test that reruns it (and fails when the table and the engine part)
    cases: int
    agreed: int


def all_agreed(test: str, date: str, cases: int, *releases: str) -> tuple[Run, ...]:
    """Run rows for releases on which `test` ran every one of its `cases` and `check` agreed on all of them."""
    return tuple(Run(release=r, date=date, test=test, cases=cases, agreed=cases) for r in releases)


@record
class Read:
    """Source read at a release tag: the file, and what it shows (a boundary is cited by commit/PR when known)."""

    release: str
    file: str
    shows: str = ""


@record
class CaptureRule:
    """How one release range of an engine picks the target layers whose hidden states feed the drafter's `fc`.

    A boundary b is the residual stream entering target layer b (engines/capture.py). Capture rows carry their own
    `first`/`last`: capture changed on releases that are not loader-era boundaries (SGLang's 0.5.5–0.5.10 reset,
    vLLM's 0.32 eagle_config fallback). Message fields are templates ({arch} {since} {version} {n} {allow}
    {model_type} {chosen} {collapsed})."""

    first: str
    last: str | None
    ids_from: tuple[str, ...]  # where configured ids are read, first present wins: "top-level" / "eagle_config"; () = never
    id_labels: dict[str, str]  # how each source, and "default" (the engine's [2, N//2, N-3]), is named in the report
    shift: int  # a configured id i means boundary i + shift (output-of-layer ids: 1)
    boundaries: str  # "before-each-layer" (captured before layer i, i < N) | "sorted-set" | "as-given"
    cite: str
    unread_note: str = ""  # said when ids exist only where this release does not read them
    resets_to_default: str = ""  # said when configured ids are replaced by the default at start-up
    first_id_rule: frozenset[str] = frozenset()  # target archs whose ids shift only when the first id is 1
    first_id_note: str = ""
    never_last: frozenset[str] = frozenset()  # target archs whose boundary N is never captured
    never_last_note: str = ""
    unreachable_note: str = ""  # "before-each-layer": said when an id points past the last layer
    collapse_note: str = ""  # "sorted-set": said when repeated ids collapse
    # which targets capture at all: arch -> first release (None: the era's capture_model_types, else not tabled)
    supported_since: dict[str, str] | None = None
    support_ok: str = ""
    support_later: str = ""
    support_never: str = ""
    support_model_types: str = ""  # the era's model_type allow-list decides
    support_unknown: str = ""  # neither is tabled


@record
class Launcher:
    """How an engine is started with an EAGLE-3 drafter, and the checks its own argument parsing makes.

    `argv` is the command `specbridge launch` prints ({target} {draft} {steps} {topk} {draft_tokens} {spec});
    `draft_tokens` the default --speculative-num-draft-tokens as an expression of steps and topk."""

    engine: str
    program: str  # program name / `-m` module prefix that runs this engine
    flags: dict[str, str]  # command-line flag -> Launch attribute
    argv: tuple[str, ...]
    cite: str
    spec_config_flags: tuple[str, ...] = ()  # flags whose value is a JSON speculative config
    target_after: str = ""  # the target is the positional word after this one ("serve")
    draft_tokens: str = ""
    copies_quantization: bool = False  # the target's --quantization reaches the draft unless it has its own
    topk1_draft_tokens: str = ""  # with topk 1 the engine adjusts num-draft-tokens to this expression
    tree_bound: bool = False  # num-draft-tokens above the tree's topk × steps + 1 nodes is refused
    fa3_topk1_only: bool = False  # --attention-backend fa3 takes only topk 1 for EAGLE
    requires_steps: str = ""  # the error when a speculative config has no num_speculative_tokens
    eagle_skips_fc: bool = False  # algorithm EAGLE on an EAGLE-3 drafter: fc skipped when widths match
    eagle_on_eagle3: str = ""  # what the engine does with method EAGLE on an EAGLE-3 drafter otherwise ("" = not read)
    # the command line for a head inside the target (MTP / NextN): no draft path; `mtp_method` is the method it names
    mtp_argv: tuple[str, ...] = ()
    mtp_method: str = ""
    # the command lines for drafters of other families (family -> its FamilyLaunch): DFlash's method and block
    families: dict[str, FamilyLaunch] = field(default_factory=dict)
    # the environment assignment that makes the engine pick a model runner (DraftClass.runner -> "NAME=value"): a
    # line for a class that drafts as trained only on that runner starts `env NAME=value` (rule D007)
    runner_env: dict[str, str] = field(default_factory=dict)
    # the speculative config as a YAML file the command line names (TensorRT-LLM's `--config`): the flags that name it
    # and how the file is laid out (SpecFile); `launch` writes the file beside the line, `check --launch` reads it
    spec_file_flags: tuple[str, ...] = ()
    spec_file: SpecFile | None = None
    eagle3_method: str = "eagle3"  # the method an EAGLE-3 line names (vLLM's JSON "method"; TensorRT-LLM's decoding_type)
    method_aliases: dict[str, str] = field(default_factory=dict)  # upper-cased method -> the one the engine runs
    steps_flag: str = ""  # how a fix names the draft steps ("" = vLLM's "num_speculative_tokens" JSON key)
    chain_only: bool = False  # the line drafts a chain only (`launch` refuses --topk above 1)


@record
class SpecFile:
    """A speculative config read from a YAML file the command line names (TensorRT-LLM: `trtllm-serve MODEL --config
    FILE`, whose `speculative_config` section is a *DecodingConfig): the section, the keys that carry the method, the
    draft steps and the drafter, and the file name `launch` writes ({name} of the launch values)."""

    section: str
    method_key: str
    steps_key: str
    draft_keys: tuple[str, ...]  # the first is written; any is read
    name: str
    cite: str


@record
class FamilyLaunch:
    """How an engine is started with a drafter of a family other than EAGLE-3 (DFlash): `argv` is the command
    `launch` prints ({target} {draft} {steps} {draft_tokens} {spec}); `spec_method` the method its JSON speculative
    config names (vLLM); `steps` the default draft steps (tokens drafted per step) as an expression of `block`, the
    drafter's trained block size; `draft_tokens` the engine's verify-window flag as an expression of `steps`."""

    family: str
    argv: tuple[str, ...]
    steps: str
    cite: str
    spec_method: str = ""
    draft_tokens: str = ""
    # the line drafts a tree (`--topk` taken, EAGLE's steps × topk): `draft_tokens` reads `steps` and `topk`; False:
    # one chain or block (topk refused)
    tree: bool = False
    # further keys of vLLM's JSON speculative config ((key, value), …): P-EAGLE's parallel_drafting
    spec_extra: tuple[tuple[str, object], ...] = ()


@record
class MethodInference:
    """How an engine release picks the speculative method when the launch line names none, or names one it does not
    keep: `tests` in order, the first that holds wins ((kind, value, METHOD): kind "path" = `value` is in the
    lower-cased draft path; "arch" = `value` is among the draft config's architectures; "arch+model_type" =
    "Arch/model_type", both; "model_type" = the draft config's model_type), else `default`. A named method in
    `retests` goes through the tests too (vLLM: an explicit `draft_model` whose path says `eagle3` runs as EAGLE-3);
    any other named method is taken as named."""

    engine: str
    first: str
    last: str | None
    retests: tuple[str, ...]
    tests: tuple[tuple[str, str, str], ...]
    default: str
    cite: str
    versions_read: tuple[str, ...]


@record
class QuantSkip:
    """How an engine decides, for one quantization method of the target, that a module is built unquantized: the
    `quantization_config` keys whose lists name the modules left out, and how an entry matches a module name
    (`exact`: the module's name or a prefix of it at a dot; `regex`: compressed-tensors' "re:" entries, else exact;
    `wildcard`: fnmatch patterns and substrings). The MTP head is built with the target's quantization, so these
    decide whether its layers expect quantized tensors (rule M004)."""

    method: str  # quantization_config.quant_method
    keys: tuple[str, ...]
    match: str
    cite: str
    # how the engine names the module it matches (re.sub pattern, replacement): SGLang's NextN decoder is
    # `model.decoder.*`, not the checkpoint's `model.layers.{N}.*`
    module_rename: tuple[str, str] | None = None
    # how the engine renames the list's entries before matching (substring old -> new; SGLang 0.5.10's NextN mapper)
    entry_rename: tuple[str, str] | None = None
    everything: bool = False  # the engine builds these modules unquantized whatever the list says
    # fused modules the class matches by their own name ((fused, its shards)): a class without packed_modules_mapping
    # builds qkv_proj quantized even when q_proj, k_proj and v_proj are each listed
    fused_by_name: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # a scale or packed tensor name only a quantized module reads
    scale_words: tuple[str, ...] = ("weight_scale", "weight_scale_inv", "input_scale", "weight_packed", "qweight", "scales")


@record
class LaunchCheck:
    """What an engine does with a launch setting for this class: `when` reads the class's namespace plus `steps`
    (the launch line's draft steps); the message may name them ({steps} {L}). DFlash's rows (D005, D006) also read
    `topk`, `draft_tokens`, `block_flag` and `gamma_flag` (the launch line's; `gamma_flag` is SGLang's
    --speculative-dspark-block-size) and `block`, `full` (the drafter's block_size and its block_size - 1 mask slots)."""

    when: str
    severity: str  # "error" (the engine refuses to start) | "warning"
    message: str
    cite: str
    code: str = ""  # the rule that reports it ("" = M005, the MTP steps rule)


@record
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
    # a name a Stack row renamed to a fused parameter the class does not have (q/k/v/gate/up of a layer it lacks):
    # "" = like any unknown name; "raise" = the loader indexes its parameter dict and raises (SGLang 0.4.6-0.4.8)
    unknown_stacked: str = ""
    unknown_stacked_message: str = ""
    # suffixes of such a fused name skipped silently instead of raising (SGLang 0.4.6-0.4.8 llama.py / qwen2.py:
    # `if name.endswith(".bias") and name not in params_dict: continue`, the GPTQ guard)
    unknown_stacked_skips: tuple[str, ...] = ()
    # checkpoint names under this prefix bypass `loader`: each fills the parameter of its name as written, else raises
    # `unknown_under_message` ({name}) whatever `unknown` says (SGLang's DSpark: markov_head.*); "" = none
    unknown_under: str = ""
    unknown_under_message: str = ""
    missing: str = "silent"  # how the engine treats parameters nothing fills
    raises: tuple[Raise, ...] = ()
    # post-load sharing with the target: expression -> "target" | "own" | "own-unless-equal"
    share_embed: str = "'own'"
    share_head: str = "'own'"
    share_cite: str = ""
    notes: tuple[str, ...] = ()
    # what the loader does when a tensor disagrees with a parameter along its tp_dim only:
    # "raise" (a size mismatch), or SGLang's narrow()/pad_or_narrow_weight behaviour
    # files beside the weights this class's loader reads by name (DFlash's mask_embedding.pt); a checkpoint's side
    # file an engine does not read is lost without a word (rule D004)
    side_files: tuple[str, ...] = ()
    # the side file's reader takes only a dict holding `embedding` and `mask_token_id` (SGLang's torch.load then
    # saved["embedding"], int(saved["mask_token_id"])); False: a bare tensor is read too (vLLM). Rule D004
    mask_file_dict_only: bool = False
    # the speculative algorithm / method (upper-cased, as `--speculative-algorithm` or vLLM's `method`) that builds
    # this class; a launch line naming another builds something else (rule L014). () = not checked here (EAGLE-3: A004)
    methods: tuple[str, ...] = ()
    # raised when one of the class's layers (range(L)) gets no tensor at all (vLLM's MTP completeness check, {layer}:
    # the layer's number as the checkpoint writes it); "" = such a layer keeps its initial values without a word
    empty_layer_message: str = ""
    # the loader's own completeness check: when `unfilled_when` holds, parameters nothing filled (the `plain` ones, or
    # all when `unfilled_all`) raise `unfilled_message` ({names}); vLLM's DefaultModelLoader for an unquantized model
    unfilled_when: str = "False"
    unfilled_all: bool = False
    unfilled_message: str = ""
    quant_skips: tuple[QuantSkip, ...] = ()  # how the target's quantization reaches this class's modules
    launch_checks: tuple[LaunchCheck, ...] = ()
    wider_tp: str = "raise"  # "raise" | "truncate"
    narrower_tp: str = "raise"  # "raise" | "pad" (for params with pads=True; the rest raise)
    # the model runner whose speculator drafts with this class as designed ("V2": vLLM's Model Runner V2; "" = any),
    # what the engine does when the other runner is chosen (`other_runner`; it refuses to start when
    # `other_runner_raises`, else it runs the drafter without part of it), and when the other runner is the default
    # (rule D007)
    runner: str = ""
    other_runner: str = ""
    other_runner_raises: bool = False
    runner_default: str = ""
    runner_cite: str = ""


@record
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
    # vLLM's EAGLEConfig: an architecture that neither starts nor ends with this word is renamed word + arch
    # ("Eagle3" for method eagle3, "DFlash" for method dflash); "" = the name is looked up as written
    rewrite_prefix: str = ""
    rewrite_keeps_suffix: bool = True  # an architecture ending with the word is kept too (eagle3, dflash; not eagle)
    rewrite_note: str = ""  # said when the rename applies ({arch} {rewritten})
    # what the engine raises on a speculators-format config it cannot read ({archs} {arch}); "" = our own words
    speculators_refusal: str = ""
    # its translation of a speculators config it reads: what it raises when a key path of `speculators_required` is
    # empty ({missing}) and for a transformer_layer_config model_type it has no class for ({mt}); the flat keys it
    # copies only when they are not null (a null one never reaches the class)
    speculators_missing: str = ""
    speculators_unsupported: str = ""
    speculators_skip_null: tuple[str, ...] = ()
    # an architecture the engine cannot dispatch, by the config's model_type: the architectures[0] that reaches the
    # engine's class for that model_type (through rewrite_prefix), simulated in its place; L005's fix says to write it
    # with `arch_fix` ({arch} {cls} {mt})
    arch_by_model_type: dict[str, str] = field(default_factory=dict)
    arch_fix: str = ""


@record
class FamilyRange:
    """A release range of one engine in which it builds and loads one drafter family's classes the same way, with its
    own `first`/`last` (inclusive; `last` None = the newest): a family's classes arrive and change on releases of
    their own. EAGLE-3's ranges (family "eagle3", each engine's eagle3.py ERAS) are its loader eras; every other
    family's are the RANGES of its file. Written as keyword rows: `FamilyRange(engine="sglang", family="eagle3",
    name=…, first="0.5.5", last="0.5.11", versions_read=…, dispatch=…, classes=…, begins=…, runs=…)`.

    A release of the engine that no row of the family covers has no class for it (`check` says so, naming the
    first release that has one). The EAGLE-3 facts at the end (`variants` … `variants_unconfirmed`) keep defaults that
    say nothing of a family that does not read them."""

    engine: str
    family: str  # families/table.py name ("eagle3", "dflash")
    first: str  # inclusive
    last: str | None  # inclusive upper bound known to behave like this (None = newest)
    dispatch: Dispatch
    classes: dict[str, DraftClass]
    # why the range starts at `first`: the change (file, commit or PR) that makes it differ from the one before,
    # or "approximate: …" when the boundary is bracketed but not pinned
    begins: str = ""
    # the name the range is shown by (check's era column, `specbridge engines`): an EAGLE-3 era's own words ("0.30+ d2t
    # only for a reduced vocabulary"); "" = the family and its span, "dflash 0.31.0+" (registry.family_era)
    name: str = ""
    versions_read: tuple[str, ...] = ()  # releases whose source we actually read for this range
    runs: tuple[Run, ...] = ()  # conformance runs of the real engine inside this range
    # source read (at tags beyond versions_read, or at commits of no established release) with what each showed; a
    # range with reads and no runs is known from source only (TensorRT-LLM)
    reads: tuple[Read, ...] = ()
    notes: tuple[str, ...] = ()
    # the engine has the family's class here but specbridge does not model its loader: check refuses (exit 2)
    # with this reason instead of guessing
    unmodelled: str = ""
    # the engine has no class for the family in any release read: why (with the files read); check says so (exit 2)
    absent: str = ""
    # architectures the engine routes to classes of this family that are not modelled: name -> the class/file
    unmodelled_archs: dict[str, str] = field(default_factory=dict)
    # classes of the range no run covered (its runs built the others): known from the wheels' source only
    not_run: tuple[str, ...] = ()
    # releases of `versions_read` the range is only placed at: none of their source was read (the range was read at
    # commits whose release is not established); `specbridge engines` and the matrix page print them as such
    placeholders: tuple[str, ...] = ()
    # --- EAGLE-3 facts (rules C011, G009, capture, convert --engine): the defaults say nothing of other families
    # the EAGLE-3 architecture variant flags this era's class reads (norm_before_fc, fc_norm, norm_output,
    # norm_before_residual); a drafter trained with another one runs as a different network here (rule C011).
    # None = not judged (TensorRT-LLM's norm_before_residual layer order was never verified)
    variants: frozenset[str] | None = frozenset()
    # the KV-cache manager needs one page size for every attention layer, the draft's included, and raises
    # NotImplementedError at start-up otherwise (rule G009)
    kv_one_page_size: bool = False
    # vLLM before 0.17: EAGLE-3 targets are allowed by a substring of their model_type (config/speculative.py
    # eagle3_target_supported); None = no such list (from 0.17 the model runner asks the class: SupportsEagle3)
    capture_model_types: tuple[str, ...] | None = None
    # the layout `convert --engine` writes for this era, and for a drafter with more than one decoder layer
    # (the midlayer.* layouts hold one)
    native_layout: str = ""
    multi_layer_layout: str = ""
    # variant flags the class does not read whose cost was never measured on this engine: C011 warns instead of
    # failing (SGLang's llama_eagle3 ignores norm_before_residual; the order it runs was read, not run)
    variants_unconfirmed: frozenset[str] = frozenset()

    @property
    def min_version(self) -> str:
        return self.first

    @property
    def max_version(self) -> str | None:
        return self.last

    @property
    def main_class(self) -> DraftClass:
        return self.classes[self.dispatch.fallback]

    @property
    def decoder_prefix(self) -> str:
        """Where the main EAGLE-3 class keeps its decoder ("model.midlayer." / "model.layers.{i}.")."""
        p = next((q.name for q in self.main_class.params if q.role == "decoder"), "")
        return p[: p.index("self_attn")] if "self_attn" in p else p

    @property
    def unknown_keys(self) -> str:
        c = self.main_class
        words = {"skip": "skipped silently", "warn": "skipped with a warning", "raise": "raises"}[c.unknown]
        if c.unknown_stacked == "raise" and c.unknown != "raise":
            words += "; a q/k/v/gate/up name with no fused parameter raises"
        if "assumed" in c.unknown_message:
            words += " (assumed, not verified)"
        return words


@lru_cache(maxsize=4096)
def parse_version(v: str) -> tuple[int, int, int]:
    """The release a PEP 440 version string belongs to: '0.5.11rc2', '0.5.11.post1', '0.5.11+cu124' and
    'v0.5.11' all -> (0, 5, 11); '0.14' -> (0, 14, 0).

    Engine behaviour changes between releases, so eras and "since" rows are bounded by releases: a
    post-release or a local build (+cu124) of X behaves as X, and a pre-release (rc, a, b, dev) is the
    code of the release it precedes (`resolve` says so in a finding). Raises ValueError on anything
    that is not a PEP 440 version. Cached: the tables compare the same few hundred release strings again and again."""
    release = _plain_release(v)
    if release is not None:  # the tables' own spelling ("0.5.11", "0.5.3.post3"): no PEP 440 parser to import
        return (*release[:3], *(0,) * (3 - len(release[:3])))  # type: ignore[return-value]
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


def _plain_release(v: str) -> tuple[int, ...] | None:
    """The release numbers of a final or post release as the tables spell them ('0.5.11', '0.5.3.post3'), else None
    (a pre-release, a local build, another spelling: PEP 440's parser reads those)."""
    parts = v.split(".")
    if len(parts) > 1 and parts[-1].startswith("post") and parts[-1][4:].isdigit():
        parts.pop()
    return tuple(int(p) for p in parts) if all(p.isdigit() for p in parts) else None


def is_prerelease(version: str) -> bool:
    if _plain_release(version) is not None:
        return False
    from packaging.version import Version

    return Version(version.strip()).is_prerelease


@record
class DraftModelRange:
    """A release range of one engine and what it does with a plain draft model (a small causal LM of the target's
    tokenizer: vLLM `method: draft_model`, SGLang `--speculative-algorithm STANDALONE`), read from its source.

    `method` is the word that asks for it ("" = the range has none: `refusal` is what the engine says instead);
    `vocab_size_raises` / `token_map_raises`: the error the engine raises at start-up when draft and target vocab
    sizes / token-to-id maps differ ("" = not checked: the server starts and the drafts are rejected);
    `vocab_opt_out`: the setting that lets the vocabularies differ; `max_len`: how the draft's context is sized."""

    engine: str
    first: str
    last: str | None
    method: str
    cite: str
    versions_read: tuple[str, ...]
    begins: str
    refusal: str = ""
    vocab_size_raises: str = ""
    token_map_raises: str = ""
    vocab_opt_out: str = ""
    max_len: str = ""
    runs: tuple[Run, ...] = ()  # conformance runs of the engine's own code on this range's releases
