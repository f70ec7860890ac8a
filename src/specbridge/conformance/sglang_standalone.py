"""Plain draft models on SGLang (--speculative-algorithm STANDALONE), run inside the SGLang conformance environment
(scripts/setup_sglang_conformance.sh), one release per process, the way sglang_loader.py runs a drafter class:

    PYTHONPATH=src ~/.cache/specbridge/sglang-conformance/venv/bin/python \\
        -m specbridge.conformance.sglang_standalone --sglang-dir ~/.cache/specbridge/sglang-conformance/wheels/VERSION \\
        TARGET DRAFT [DRAFT ...]

What runs is SGLang's code:
  * its own argument parser (ServerArgs.add_cli_args) over `--speculative-algorithm STANDALONE` and the draft path:
    a release without the algorithm refuses it there (argparse's message is returned),
  * StandaloneWorkerV2._validate_vocab_compatibility (standalone_worker_v2.py, where the release has it; the
    function compiled from the release's file, since the worker module imports the scheduler and its serving-only
    packages), called as StandaloneWorkerV2.__init__ calls it: the target's vocab size from SGLang's ModelConfig over the target, the
    draft's from ModelConfig(is_draft_model=True) over the draft (the draft runner's config), the target worker's
    tokenizer from SGLang's get_tokenizer over the target, and the draft worker's tokenizer as TpModelWorker gives it
    to a draft worker: none where the release's tp_worker.py says `if ... or self.is_draft_worker: self.tokenizer = None`
    (read from the file per release and returned), else the draft's own,
  * the draft's own architecture class (a registered target class: STANDALONE builds the draft model like a target)
    built and loaded by sglang_loader.run.
The worker itself (a GPU model runner, memory pools) is not built.

Prints one JSON list, one object per DRAFT:
  sglang_version, parses, refusal (argparse's message when it does not parse), validator (whether the release has
  _validate_vocab_compatibility), draft_worker_tokenizer ("none" or "draft"), error (what the validator raised,
  "" = nothing), error_with_draft_tokenizer (the same call handed the draft's own tokenizer), target_vocab_size,
  draft_vocab_size, load (class, errors, unfilled and skipped of the draft's load; absent when it does not parse).
"""

from __future__ import annotations
import __future__

import argparse
import ast
import contextlib
import io
import json
import os
import re
import sys
import tempfile
import types
from pathlib import Path

# tp_worker.py (every release read from 0.5.15 on): a draft worker keeps no tokenizer ("tokenizer_path always points at the target")
DRAFT_HAS_NO_TOKENIZER = re.compile(r"skip_tokenizer_init\s+or\s+self\.is_draft_worker")


def _parses(target: Path, draft: Path) -> tuple[bool, str]:
    from sglang.srt.server_args import ServerArgs

    parser = argparse.ArgumentParser()
    ServerArgs.add_cli_args(parser)
    argv = ["--model-path", str(target), "--speculative-algorithm", "STANDALONE", "--speculative-draft-model-path", str(draft)]
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            ns = parser.parse_args(argv)
    except SystemExit:
        lines = [ln for ln in err.getvalue().splitlines() if "error:" in ln]
        return False, lines[-1].split("error: ", 1)[-1] if lines else err.getvalue().strip()
    return ns.speculative_algorithm == "STANDALONE", ""


def _model_config(path: Path, draft: bool):
    from sglang.srt.configs.model_config import ModelConfig

    return ModelConfig(model_path=str(path), trust_remote_code=False, model_override_args="{}", is_draft_model=draft)


def _tokenizer(path: Path):
    try:  # 0.5.11+
        from sglang.srt.utils.hf_transformers_utils import get_tokenizer
    except ImportError:
        from sglang.srt.hf_transformers_utils import get_tokenizer

    return get_tokenizer(str(path))


def _release_function(module: str, cls: str, fn: str):
    """`cls.fn` of SGLang's `module`, compiled from the release's own source file without importing the module (the
    worker modules import the scheduler and its serving-only packages, absent here); None where the release has none."""
    import importlib.util

    spec = importlib.util.find_spec(module)
    if spec is None or not spec.origin:
        return None
    tree = ast.parse(Path(spec.origin).read_text())
    klass = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls), None)
    func = next((n for n in (klass.body if klass else ()) if isinstance(n, ast.FunctionDef) and n.name == fn), None)
    if func is None:
        return None
    func.decorator_list = []
    code = compile(ast.Module(body=[func], type_ignores=[]), spec.origin, "exec", flags=__future__.annotations.compiler_flag)
    ns: dict = {}
    exec(code, ns)  # noqa: S102  the release's own function body
    return ns[fn]


def _draft_worker_has_no_tokenizer() -> bool:
    """tp_worker.py's TpModelWorker.__init__ (read from the release): a draft worker keeps no tokenizer."""
    import importlib.util

    spec = importlib.util.find_spec("sglang.srt.managers.tp_worker")
    return spec is not None and DRAFT_HAS_NO_TOKENIZER.search(Path(spec.origin).read_text()) is not None


def _validate(target: Path, draft: Path) -> dict:
    """The release's own vocabulary check, called with what the worker would hand it (see the module text)."""
    check = _release_function("sglang.srt.speculative.standalone_worker_v2", "StandaloneWorkerV2", "_validate_vocab_compatibility")
    if check is None:
        return {"validator": False}
    none = _draft_worker_has_no_tokenizer()
    t_cfg, d_cfg = _model_config(target, False), _model_config(draft, True)
    t_tok, d_tok = _tokenizer(target), _tokenizer(draft)

    def call(draft_tokenizer) -> str:
        worker = types.SimpleNamespace(
            draft_runner=types.SimpleNamespace(model_config=d_cfg), draft_worker=types.SimpleNamespace(tokenizer=draft_tokenizer)
        )
        try:
            check(types.SimpleNamespace(_draft_worker=worker), target_vocab_size=t_cfg.vocab_size, target_tokenizer=t_tok)
        except Exception as e:  # noqa: BLE001  what the release raises is the result
            return f"{type(e).__name__}: {e}"
        return ""

    return {
        "validator": True,
        "draft_worker_tokenizer": "none" if none else "draft",
        "error": call(None if none else d_tok),
        "error_with_draft_tokenizer": call(d_tok),
        "target_vocab_size": t_cfg.vocab_size,
        "draft_vocab_size": d_cfg.vocab_size,
    }


def run(target: Path, draft: Path) -> dict:
    """One draft: parsed, validated and loaded (a release that refuses the algorithm stops at the parser)."""
    from . import sglang_loader

    env = sglang_loader.setup(json.loads((draft / "config.json").read_text()))  # stubs, ServerArgs, the gloo world, once
    out: dict = {"sglang_version": env["sglang_version"], "draft": str(draft)}
    out["parses"], out["refusal"] = _parses(target, draft)
    if not out["parses"]:
        return out | {"validator": False}
    out |= _validate(target, draft)
    loaded = sglang_loader.run(draft)
    out["load"] = {k: loaded.get(k) for k in ("class", "dispatched", "errors", "unfilled", "partial", "skipped")}
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sglang-dir", help="folder holding the unpacked sglang package (put first on sys.path)")
    ap.add_argument("target", type=Path)
    ap.add_argument("draft", type=Path, nargs="+")
    a = ap.parse_args(argv)
    if a.sglang_dir:
        sys.path.insert(0, os.path.abspath(a.sglang_dir))
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    tempfile.tempdir = tempfile.mkdtemp(prefix="sglang-standalone-")
    real_stdout = sys.stdout
    with contextlib.redirect_stdout(sys.stderr):  # SGLang's own prints must not corrupt the JSON
        outs = [run(a.target, d) for d in a.draft]
    real_stdout.write(json.dumps(outs, default=str) + "\n")
    real_stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
