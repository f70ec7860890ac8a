"""Write the small example checkpoints the README's examples check (examples/dflash-drafter, examples/glm-fp8) with the
test fixtures' own writers, so the README, the tests and the examples describe one thing. Random weights, real names,
shapes and configs. Rerun after a fixture writer changes:  .venv/bin/python scripts/make_examples.py"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

import dflash_fixtures as dfx  # noqa: E402
import mtp_fixtures as mx  # noqa: E402
from test_mtp_check import FP8  # noqa: E402  (the quantization the MTP tests give a GLM target)

EXAMPLES = {
    # a two-layer DFlash drafter laid out as vLLM's qwen3_dflash.py loads it (z-lab's layout)
    "dflash-drafter": lambda d: dfx.write(d),
    # a GLM-4.5-shaped target re-quantized to FP8 without its MTP layer (the GLM-5 NVFP4 failure, vllm #35548)
    "glm-fp8": lambda d: mx.write_target(d, mx.glm_config(quantization_config=FP8), mtp=False),
}


def main() -> None:
    for name, write in EXAMPLES.items():
        d = REPO / "examples" / name
        shutil.rmtree(d, ignore_errors=True)
        write(d)
        print(f"wrote {d.relative_to(REPO)}")


if __name__ == "__main__":
    main()
