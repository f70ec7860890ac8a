#!/usr/bin/env bash
# The deploy gate of docs/ci.md, runnable here on the bundled drafter:
#   examples/ci-gate.sh [DRAFTER] [TARGET]        (ENGINE=sglang==0.5.11 examples/ci-gate.sh fails: the story)
# Exit 0 only when the engine version loads every tensor, drafter/target/launch agree, and the offline
# accept length as that engine loads the drafter reaches the bar. Reports land in $OUT (default .).
set -euo pipefail
DRAFTER=${1:-examples/smollm2-drafter}
TARGET=${2:-smollm2-135m}
ENGINE=${ENGINE:-vllm==0.32.0}
OUT=${OUT:-.}
# specbridge on PATH (an activated venv), else the repository's own .venv (./setup.sh)
HERE=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${SPECBRIDGE:-}" ]; then
  if command -v specbridge > /dev/null; then SPECBRIDGE=specbridge; else SPECBRIDGE="$HERE/.venv/bin/specbridge"; fi
fi
SB=$SPECBRIDGE
$SB check "$DRAFTER" --engine "$ENGINE" --target "$TARGET" --fail-on A002,C003 --json > "$OUT/check.json"
$SB eval "$DRAFTER" --target "$TARGET" --engine "$ENGINE" --num-prompts 8 --max-new-tokens 32 \
  --fail-under "${FAIL_UNDER:-1.3}" --json > "$OUT/eval.json"
echo "gate passed: $DRAFTER on $ENGINE"
