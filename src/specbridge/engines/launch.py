"""Read and write the engines' launch command lines (the speculative-decoding part of them).

The flags, programs and command templates are each engine's `LAUNCH` row (`spec.Launcher`, in its engine file);
this module only reads and writes command lines with them."""

from __future__ import annotations

import json
import shlex

from ..record import field, record
from .expr import evaluate
from .registry import LAUNCHERS, SERVERS


class LaunchError(ValueError):
    pass


@record(frozen=False)
class Launch:
    engine: str  # "sglang" | "vllm" | "trtllm"
    target: str | None = None
    algorithm: str | None = None  # SGLang --speculative-algorithm / vLLM method, upper-cased
    draft: str | None = None
    steps: int | None = None
    topk: int | None = None
    draft_tokens: int | None = None
    block_size: int | None = None  # SGLang --speculative-dflash-block-size (DFLASH's alias of the draft tokens)
    dspark_block_size: int | None = None  # SGLang --speculative-dspark-block-size (DSPARK's gamma: draft tokens - 1)
    tp: int | None = None
    draft_tp: int | None = None
    context_length: int | None = None
    dtype: str | None = None
    quantization: str | None = None
    draft_quantization: str | None = None
    attention_backend: str | None = None
    parallel_drafting: bool | None = None  # vLLM's speculative config parallel_drafting (P-EAGLE); None: not given
    extra: dict = field(default_factory=dict)
    env: dict = field(default_factory=dict)  # NAME=value words before the engine's program (`env NAME=value vllm …`)
    raw: str = ""


INTS = {"steps", "topk", "draft_tokens", "block_size", "dspark_block_size", "tp", "draft_tp", "context_length"}


def max_draft_tokens(steps: int, topk: int) -> int:
    """The most `--speculative-num-draft-tokens` SGLang accepts for a tree of `steps` levels of `topk`
    (topk × steps + 1 nodes, the root included); a chain verifies exactly steps + 1."""
    return topk * steps + 1


def _set(launch: Launch, attr: str, value: str) -> None:
    if attr in INTS:
        try:
            setattr(launch, attr, int(value))
        except ValueError:
            raise LaunchError(f"{attr.replace('_', ' ')} must be an integer, got {value!r}") from None
    else:
        setattr(launch, attr, value)


def parse_launch(cmd: str, files: dict[str, str] | None = None) -> Launch:
    """Parse `python -m sglang.launch_server …`, `vllm serve …` (or the vLLM api_server module) or `trtllm-serve …`.
    A speculative config the line names as a file (the LAUNCH row's `spec_file_flags`) is read from `files` (name ->
    text, what `launch` is about to write) or else from disk."""
    try:
        argv = shlex.split(cmd)
    except ValueError as e:
        raise LaunchError(f"cannot parse the launch command: {e}") from None
    engine = _program(argv)
    if engine is None:
        raise LaunchError(
            "the launch command runs none of sglang (python -m sglang.launch_server), vllm (vllm serve), tensorrt-llm (trtllm-serve)"
        )
    row = LAUNCHERS[engine]
    flags = row.flags
    head = env_prefix(argv)
    launch = Launch(engine, raw=cmd, env=dict(w.split("=", 1) for w in head if "=" in w))
    argv = argv[len(head) :]
    i = 0
    positional: list[str] = []
    while i < len(argv):
        a = argv[i]
        key, eq, val = a.partition("=")
        if key in flags or key in row.spec_config_flags or key in row.spec_file_flags:
            if not eq:
                if i + 1 >= len(argv):
                    raise LaunchError(f"{key} needs a value")
                val = argv[i + 1]
                i += 1
            if key in row.spec_config_flags:
                _vllm_spec(launch, val)
            elif key in row.spec_file_flags:
                _file_spec(launch, row, val, files)
            else:
                _set(launch, flags[key], val)
        elif a.startswith("-"):
            if not eq and i + 1 < len(argv) and not argv[i + 1].startswith("-"):
                launch.extra[key] = argv[i + 1]
                i += 1
            else:
                launch.extra[key] = val if eq else True
        else:
            positional.append(a)
        i += 1
    if row.target_after and launch.target is None:
        after = positional[positional.index(row.target_after) + 1 :] if row.target_after in positional else []
        if after:
            launch.target = after[0]
    if launch.algorithm:
        launch.algorithm = launch.algorithm.upper()
        launch.algorithm = row.method_aliases.get(launch.algorithm, launch.algorithm)
    return launch


def _program(argv: list[str]) -> str | None:
    """Which engine the command runs: by its program or `-m` module, never by paths in its arguments."""
    programs = {row.program: name for name, row in LAUNCHERS.items()}
    for i, a in enumerate(argv):
        base = a.rsplit("/", 1)[-1]
        if base in programs:
            return programs[base]
        if base == "env" and i == 0:  # `env NAME=value … program`: the environment words, then the program
            continue
        if a == "-m" and i + 1 < len(argv):
            mod = argv[i + 1]
            return next((name for prog, name in programs.items() if mod.startswith(prog)), None)
        if not (base.startswith("python") or "=" in a and not a.startswith("-")):
            return None  # the first real word is another program
    return None


def env_prefix(argv: list[str]) -> list[str]:
    """The words before the program that set its environment: `env` and its NAME=value words, or bare NAME=value
    words (a shell's assignments)."""
    out = []
    for i, a in enumerate(argv):
        if (a == "env" and i == 0) or ("=" in a and not a.startswith("-") and a.split("=", 1)[0].isidentifier()):
            out.append(a)
        else:
            break
    return out


def runner_env(engine: str, runner: str) -> tuple[str, ...]:
    """The `NAME=value` a line sets for a class that drafts as trained only on `runner` (DraftClass.runner): the
    engine's LAUNCH row `runner_env`; () when the class runs on any runner or the engine has no such setting."""
    row = LAUNCHERS.get(engine)
    env = row.runner_env.get(runner) if row is not None and runner else None
    return (env,) if env else ()


def _vllm_spec(launch: Launch, val: str) -> None:
    try:
        spec = json.loads(val)
    except json.JSONDecodeError as e:
        raise LaunchError(f"--speculative-config is not valid JSON: {e.msg}") from None
    if not isinstance(spec, dict):
        raise LaunchError("--speculative-config must be a JSON object")
    launch.algorithm = str(spec.get("method", "")).upper() or None
    launch.draft = spec.get("model")
    launch.steps = spec.get("num_speculative_tokens")
    launch.draft_tp = spec.get("draft_tensor_parallel_size")
    launch.draft_quantization = spec.get("quantization")
    if "parallel_drafting" in spec:
        launch.parallel_drafting = spec["parallel_drafting"] is True
    if spec.get("max_model_len"):
        launch.extra["draft_max_model_len"] = spec["max_model_len"]


def _file_spec(launch: Launch, row, path: str, files: dict[str, str] | None) -> None:
    """The speculative config of a YAML file the line names (TensorRT-LLM's `--config` / `--extra_llm_api_options`):
    its `speculative_config` section's decoding type, draft steps and drafter, as the LAUNCH row's SpecFile says."""
    import yaml

    spec = row.spec_file
    if files is not None and path in files:
        text = files[path]
    else:
        try:
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
        except OSError as e:
            raise LaunchError(f"cannot read the speculative config file {path} the launch command names: {e.strerror}") from None
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise LaunchError(f"{path} is not valid YAML: {e}") from None
    section = doc.get(spec.section) if isinstance(doc, dict) else None
    launch.extra["spec_file"] = path
    if section is None:
        return  # a config file without speculative decoding: the line starts no drafter
    if not isinstance(section, dict):
        raise LaunchError(f"{path}: {spec.section} must be a mapping")
    launch.algorithm = str(section.get(spec.method_key, "")) or None
    launch.draft = next((section[k] for k in spec.draft_keys if section.get(k) is not None), None)
    steps = section.get(spec.steps_key)
    if steps is not None and type(steps) is not int:
        raise LaunchError(f"{path}: {spec.section}.{spec.steps_key} must be an integer, got {steps!r}")
    launch.steps = steps


def spec_file_text(engine: str, draft: str | None, steps: int, family: str = "eagle3") -> tuple[str, str] | None:
    """(file name, YAML text) of the speculative config a line of this engine names as a file (its LAUNCH row's
    SpecFile), for the drafter's family (`draft` None: the target's MTP head); None for an engine whose line carries
    the config itself."""
    import yaml

    row = LAUNCHERS[engine]
    spec = row.spec_file
    if spec is None:
        return None
    method = row.mtp_method if draft is None else row.eagle3_method if family == "eagle3" else _family_row(engine, family).spec_method
    body = {spec.method_key: method, spec.steps_key: steps} | ({} if draft is None else {spec.draft_keys[0]: draft})
    return spec.name, yaml.safe_dump({spec.section: body}, sort_keys=False)


def family_steps(engine: str, family: str, block: int | None, trained: int | None = None) -> int | None:
    """The draft steps a drafter of `family` is launched with on this engine (its LAUNCH row's `families[family].steps`,
    an expression of `block`, the trained block size, and `trained`, the tokens its speculators config says it drafts),
    or None when the expression needs a value the drafter does not give."""
    fam = _family_row(engine, family)
    steps = evaluate(fam.steps, {"block": block, "trained": trained})
    return None if steps is None else int(steps)


def infer_method(row, named: str | None, path: str, cfg: dict) -> str | None:
    """The method an engine release runs a launch line with (its METHOD_INFERENCE row): the named one, unless the
    row tests it again (vLLM's explicit draft_model); else the first of the row's tests that holds for the draft's
    path, architectures and model_type, else the row's default. None: the line names none and the engine infers
    nothing (no row)."""
    if row is None or (named and named not in row.retests):
        return named
    hit = inference_test(row, path, cfg)
    return hit[2] if hit is not None else named or row.default


def inference_test(row, path: str, cfg: dict) -> tuple[str, str, str] | None:
    """The first of a METHOD_INFERENCE row's tests that holds for the draft ((kind, value, METHOD)), or None."""
    archs = [a for a in (cfg.get("architectures") or []) if isinstance(a, str)]
    model_type = cfg.get("model_type")
    for test in row.tests:
        kind, value, _ = test
        if kind == "path":
            hit = value in path.lower()
        elif kind == "arch":
            hit = value in archs
        elif kind == "arch+model_type":
            arch, _, mt = value.partition("/")
            hit = arch in archs and model_type == mt
        elif kind == "model_type":
            hit = model_type == value
        else:
            raise ValueError(f"{row.cite}: unknown inference test {kind!r}")
        if hit:
            return test
    return None


def corrected_line(launch: Launch, method: str, spec_extra: tuple = ()) -> str:
    """The user's launch line with the speculative method replaced by `method` (upper-cased as rows write it): SGLang's
    `--speculative-algorithm` value (added when absent), vLLM's `method` in the JSON speculative config, plus the
    family's further config keys (`spec_extra`); every other word kept."""
    row = LAUNCHERS[launch.engine]
    argv = shlex.split(launch.raw)
    algo_flags = [f for f, attr in row.flags.items() if attr == "algorithm"]
    for i, a in enumerate(argv):
        key, eq, val = a.partition("=")
        value_at = i if eq else i + 1
        if key in row.spec_config_flags and value_at < len(argv):
            spec = json.loads(val if eq else argv[value_at])
            spec = {"method": method.lower(), **{k: v for k, v in spec.items() if k != "method"}} | dict(spec_extra)
            text = json.dumps(spec, separators=(",", ":"))
            argv[value_at] = f"{key}={text}" if eq else text
            return shlex.join(argv)
        if key in algo_flags and value_at < len(argv):
            argv[value_at] = f"{key}={method}" if eq else method
            return shlex.join(argv)
    if algo_flags:
        return shlex.join(argv + [algo_flags[0], method])
    return launch.raw


def _family_row(engine: str, family: str):
    row = LAUNCHERS.get(engine)
    if row is None:
        raise LaunchError(f"no launch command for engine {engine!r} ({', '.join(LAUNCHERS)})")
    fam = row.families.get(family)
    if fam is None:
        raise LaunchError(f"no launch command for a {family} drafter on {engine} (its LAUNCH row has none)")
    return fam


def build_launch(
    engine: str,
    target: str,
    draft: str | None,
    steps: int,
    topk: int,
    draft_tokens: int | None,
    extra: list[str] | None = None,
    family: str = "eagle3",
    env: tuple[str, ...] = (),
    method: str = "",
) -> str:
    """The engine command line (checked by `check` before it is printed): the engine's `LAUNCH.argv` filled in for an
    EAGLE-3 drafter, `LAUNCH.families[family].argv` for a drafter of another family (DFlash), or `LAUNCH.mtp_argv`
    for the MTP head inside the target (`draft` None). `env` (runner_env's NAME=value words) starts the line with
    `env NAME=value`, which a shell and a process spawn both run. `method`: the word that asks for the family when
    the release says it, not the row (a plain draft model: the release's DRAFT_MODEL row, `{method}` in the argv)."""
    pre = ["env", *env] if env else []
    row = LAUNCHERS.get(engine)
    if row is None:
        raise LaunchError(f"no launch command for engine {engine!r} ({', '.join(LAUNCHERS)})")
    if family != "eagle3" and draft is not None:
        fam = _family_row(engine, family)
        method = method or fam.spec_method
        if draft_tokens is None and fam.draft_tokens:
            draft_tokens = int(evaluate(fam.draft_tokens, {"steps": steps, "topk": topk}))
        body = {"method": method.lower(), "model": draft, "num_speculative_tokens": steps} | dict(fam.spec_extra)
        spec = json.dumps(body, separators=(",", ":"))
        values = {"target": target, "draft": draft, "steps": steps, "topk": topk, "draft_tokens": draft_tokens, "spec": spec}
        values["config"] = row.spec_file.name if row.spec_file else ""
        values["method"] = method
        return shlex.join(pre + [a.format(**values) for a in fam.argv] + list(extra or []))
    if draft_tokens is None and row.draft_tokens:
        draft_tokens = int(evaluate(row.draft_tokens, {"steps": steps, "topk": topk}))
    if draft is None:
        spec = json.dumps({"method": row.mtp_method, "num_speculative_tokens": steps}, separators=(",", ":"))
        argv = row.mtp_argv
    else:
        spec = json.dumps({"method": row.eagle3_method, "model": draft, "num_speculative_tokens": steps}, separators=(",", ":"))
        argv = row.argv
    values = {"target": target, "draft": draft, "steps": steps, "topk": topk, "draft_tokens": draft_tokens, "spec": spec}
    values["config"] = row.spec_file.name if row.spec_file else ""
    values["method"] = "EAGLE3"
    return shlex.join(pre + [a.format(**values) for a in argv] + list(extra or []))


def with_interpreter(engine: str, argv: list[str], python: str | None) -> list[str]:
    """A launch line run by a given Python (a venv that has the engine): the row's `interpreter` words
    replace the line's own program; without `python` the line is what `launch` prints."""
    prefix, replacement = SERVERS[engine].interpreter
    head = env_prefix(argv)  # `env NAME=value` stays in front of the interpreter
    rest = argv[len(head) :]
    if python is None or tuple(rest[: len(prefix)]) != prefix:
        return argv
    return head + [w.format(python=python) for w in replacement] + rest[len(prefix) :]


def without_speculation(engine: str, argv: list[str]) -> list[str]:
    """The launch line with its speculative tail cut (the row's `speculative_from` word onwards): the same
    server without a drafter, the baseline a sweep compares against."""
    cut = SERVERS[engine].speculative_from
    if cut not in argv:
        raise LaunchError(f"the {engine} launch line has no {cut}: {shlex.join(argv)}")
    return argv[: argv.index(cut)]
