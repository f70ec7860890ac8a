"""Launch-line harness for SGLang's DSPARK: SGLang's own argument handling, run on launch settings.

Runs INSIDE the SGLang conformance environment (as sglang_loader.py, whose stubs it installs), one release per process:

    PYTHONPATH=src ~/.cache/specbridge/sglang-conformance/venv/bin/python \\
        -m specbridge.conformance.sglang_launch --sglang-dir …/wheels/0.5.20 --target TARGET CASES.json

CASES.json: a list of {"draft": DIR, "args": {ServerArgs field: value}}. For each case a CPU ServerArgs is built for
TARGET (its own __post_init__), the case's fields are set on it with speculative_algorithm DSPARK, device "cuda"
(_handle_dspark refuses other devices before reading anything else) and the draft path, and the release's own
sglang/srt/arg_groups/speculative_hook.py `_handle_dspark` runs on it. When it accepts the settings, the worker's own
start-up check runs too: dspark_config.py `resolve_runtime_config` over the draft's config.json with the verify window
_handle_dspark resolved (0.5.19+ keep it in the resolution stash: read through resolved_view), and the draft's
vocab_size as the target's. Prints a JSON list, one object per case:
  error     what SGLang raised ("Type: message"), or null
  logs      SGLang's warnings (WARNING and above) while handling the case
  window    the --speculative-num-draft-tokens SGLang resolved (null when it raised)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import sys
from pathlib import Path


class _Logs(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.records: list[str] = []

    def emit(self, record):
        self.records.append(record.getMessage())


def _window(sa):
    try:  # 0.5.19+: a resolution is declared, not written
        from sglang.srt.arg_groups.overrides import resolved_view

        return resolved_view(sa).speculative_num_draft_tokens
    except (ImportError, AttributeError):
        return sa.speculative_num_draft_tokens


def run_case(target: str, case: dict) -> dict:
    from sglang.srt.arg_groups import speculative_hook
    from sglang.srt.server_args import ServerArgs
    from sglang.srt.speculative.dspark_components import dspark_config

    cap = _Logs()
    sa = ServerArgs(model_path=target, device="cpu")
    for k, v in case["args"].items():
        setattr(sa, k, v)
    sa.device, sa.speculative_algorithm, sa.speculative_draft_model_path = "cuda", "DSPARK", case["draft"]
    root = logging.getLogger()
    root.addHandler(cap)
    out: dict = {"error": None, "window": None}
    try:
        speculative_hook._handle_dspark(sa)
        out["window"] = _window(sa)
        cfg = json.loads((Path(case["draft"]) / "config.json").read_text())
        dspark_config.resolve_runtime_config(
            draft_hf_config=cfg, speculative_num_draft_tokens=out["window"], target_vocab_size=int(cfg["vocab_size"])
        )
    except Exception as e:  # noqa: BLE001  SGLang refusing the settings is a result
        out["error"] = f"{type(e).__name__}: {e}"
    finally:
        root.removeHandler(cap)
    out["logs"] = cap.records
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sglang-dir", required=True, help="folder holding the unpacked sglang package")
    ap.add_argument("--target", required=True, help="the target model directory (config.json)")
    ap.add_argument("cases", type=Path, help="JSON list of {draft, args}")
    a = ap.parse_args(argv)
    sys.path.insert(0, os.path.abspath(a.sglang_dir))
    from specbridge.conformance.sglang_loader import _install_stubs

    _install_stubs()
    logging.getLogger().setLevel(logging.WARNING)
    real_stdout = sys.stdout
    with contextlib.redirect_stdout(sys.stderr):
        outs = [run_case(a.target, c) for c in json.loads(a.cases.read_text())]
    real_stdout.write(json.dumps(outs, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
