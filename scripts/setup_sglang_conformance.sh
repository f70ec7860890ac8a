#!/usr/bin/env bash
# Cached environment for the SGLang real-loader conformance tests (tests/test_conformance_sglang.py,
# harness src/specbridge/conformance/sglang_loader.py). OUTSIDE the repo; idempotent: a version whose
# marker exists is skipped, and the whole script exits at once when everything is there.
#
#   scripts/setup_sglang_conformance.sh                 # -> ~/.cache/specbridge/sglang-conformance/
#   SPECBRIDGE_SGLANG_CONFORMANCE=/path scripts/setup_sglang_conformance.sh
#   SPECBRIDGE_SGLANG_VERSIONS="0.5.11 0.5.23" scripts/setup_sglang_conformance.sh
#
# Layout:
#   venv/               one Python venv: torch==2.13.0 (the local CPU wheel) + the pure-Python packages that
#                       importing SGLang's model code needs (pinned below)
#   wheels/<version>/   `pip install --no-deps --target`: that SGLang wheel, plus the transformers /
#                       tokenizers / huggingface-hub it pins where the venv's do not fit (see extra_for: each
#                       wheel's own transformers pin). The harness puts it first on sys.path.
#   wheels/<version>/.specbridge-ok   written after the harness loaded examples/story with that version.
#
# Why not `pip install sglang`: every release pins a CUDA torch (0.5.23: torch==2.14.1) and CUDA-only
# packages (sglang-kernel, flashinfer, …), per each wheel's METADATA Requires-Dist. Never let pip resolve torch
# here: every install below is either --no-deps or constrained to torch==2.13.0. torchvision is never
# installed (PyPI's build needs CUDA torch); the harness stubs it, and vllm / sgl_kernel.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
ROOT=${SPECBRIDGE_SGLANG_CONFORMANCE:-$HOME/.cache/specbridge/sglang-conformance}
# default: every release the SGLang engine table records a conformance run for (Era.runs in
# src/specbridge/engines/sglang/eagle3.py), so adding a Run row there is what adds a release here and in the test
# (SPECBRIDGE_CONFORMANCE=per-era: only the newest run release of each era, as CI does)
TABLE_PY=${PYTHON:-python3}; [ -x "$REPO/.venv/bin/python" ] && TABLE_PY="$REPO/.venv/bin/python"  # needs `packaging`
TABLE_VERSIONS=$(cd "$REPO/src" && "$TABLE_PY" -c 'from specbridge.engines.registry import conformance_releases as c; print(" ".join(c("sglang", "tests/test_conformance_sglang.py")))')
VERSIONS=${SPECBRIDGE_SGLANG_VERSIONS:-$TABLE_VERSIONS}
PY=${PYTHON:-python3}
VENV="$ROOT/venv"
t0=$(date +%s)

mkdir -p "$ROOT/wheels"
printf 'torch==2.13.0\n' > "$ROOT/constraints.txt"
PIP="$VENV/bin/python -m pip --disable-pip-version-check -q"
quiet() { grep -v -E "is ignored: it is neither a file nor a directory|already exists. Specify --upgrade" || true; }

# packages imported on the way to sglang.srt.models.llama_eagle3 (0.4.9.post6 … 0.5.23) and by the harness
BASE=(
  "torch==2.13.0" "numpy==2.4.6" "safetensors==0.8.0"
  "transformers==5.19.0" "tokenizers==0.23.3" "huggingface_hub==2.4.0"
  "triton==3.8.0" "compressed-tensors==0.18.0" "apache-tvm-ffi==0.1.11" "gguf==0.19.0"
  "sentencepiece==0.2.3" "einops==0.8.2" "openai==2.6.1" "partial-json-parser==0.2.1.1.post7"
  "fastapi==0.165.0" "starlette==1.10.0" "pydantic==2.14.4" "msgspec==0.23.0" "orjson==3.13.0"
  "pybase64==1.5.1" "psutil==7.2.2" "pyzmq==27.3.0" "requests==2.34.2" "aiohttp==3.14.5"
  "httpx==0.28.1" "ipython==9.18.1" "dill==0.4.1" "pillow==13.0.0" "tqdm==4.70.1" "packaging==26.4"
)
if [ ! -f "$VENV/.specbridge-ok" ]; then
  [ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
  $PIP install -c "$ROOT/constraints.txt" "torch==2.13.0" 2>&1 | quiet
  $PIP install -c "$ROOT/constraints.txt" "${BASE[@]}" 2>&1 | quiet
  "$VENV/bin/python" - <<'PY'
import importlib.metadata as md, sys
import torch
assert torch.__version__.startswith("2.13.0") and not torch.version.cuda, torch.__version__
for bad in ("torchvision", "sgl-kernel", "vllm"):
    try:
        md.version(bad)
    except md.PackageNotFoundError:
        continue
    sys.exit(f"{bad} is installed in the SGLang conformance venv: it must not be (see the script's header)")
PY
  date -u +%FT%TZ > "$VENV/.specbridge-ok"
fi

extra_for() {  # per-version pins that differ from the venv's (installed --no-deps into wheels/<v>)
  case "$1" in
    0.5.11|0.5.12) echo "transformers==5.6.0 tokenizers==0.22.2 huggingface-hub==1.33.0" ;;
    0.5.2) echo "transformers==4.56.1 tokenizers==0.22.2 huggingface-hub==0.36.2" ;;
    0.4.9.post6) echo "transformers==4.54.0 tokenizers==0.21.4 huggingface-hub==0.36.2" ;;
    # each wheel's own Requires-Dist transformers pin (0.4.6.post5: its runtime-common extra), with a
    # tokenizers / huggingface-hub inside that transformers' own bounds
    # (and compressed-tensors of their time: the venv's 0.18 imports transformers.masking_utils, new in 4.53)
    0.4.6.post5) echo "transformers==4.51.1 tokenizers==0.21.4 huggingface-hub==0.36.2 compressed-tensors==0.9.4" ;;
    0.4.7.post1|0.4.8.post1) echo "transformers==4.52.3 tokenizers==0.21.4 huggingface-hub==0.36.2 compressed-tensors==0.9.4" ;;
    0.5.1.post3) echo "transformers==4.55.2 tokenizers==0.21.4 huggingface-hub==0.36.2" ;;
    0.5.4.post3|0.5.5.post3|0.5.8|0.5.9) echo "transformers==4.57.1 tokenizers==0.22.2 huggingface-hub==0.36.2" ;;
    0.5.10) echo "transformers==5.3.0 tokenizers==0.22.2 huggingface-hub==1.33.0" ;;
    # 0.5.16-0.5.20 import xgrammar (their pin, a CPU-capable wheel) at module level in function_call/
    0.5.16|0.5.17|0.5.18|0.5.19|0.5.20) echo "transformers==5.12.1 tokenizers==0.22.2 huggingface-hub==1.33.0 xgrammar==0.2.1" ;;
    0.5.21) echo "transformers==5.12.1 tokenizers==0.22.2 huggingface-hub==1.33.0 xgrammar==0.2.7" ;;
    *) echo "" ;;
  esac
}

for v in $VERSIONS; do
  dir="$ROOT/wheels/$v"
  if [ -f "$dir/.specbridge-ok" ]; then
    echo "sglang $v: OK ($dir)"
    continue
  fi
  rm -rf "$dir"
  mkdir -p "$dir"
  # shellcheck disable=SC2046
  $PIP install --no-deps --target "$dir" "sglang==$v" $(extra_for "$v") 2>&1 | quiet
  # smoke: the harness on the bundled example (SGLang's own class, built and loaded)
  if PYTHONPATH="$REPO/src" "$VENV/bin/python" -m specbridge.conformance.sglang_loader --sglang-dir "$dir" \
      "$REPO/examples/story" > "$dir/smoke.json" 2> "$dir/smoke.log" \
     && "$VENV/bin/python" -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d.get('params') and not d.get('harness_failed') else 1)" "$dir/smoke.json"; then
    date -u +%FT%TZ > "$dir/.specbridge-ok"
    echo "sglang $v: ready ($dir)"
  else
    echo "sglang $v: smoke test FAILED, see $dir/smoke.log" >&2
    tail -5 "$dir/smoke.log" >&2 || true
    exit 1
  fi
done
echo "SGLang conformance environment: $ROOT ($(( $(date +%s) - t0 )) s)"
