"""Files shipped inside the package (prompts, target configs): found the same way from a checkout and
from an installed wheel, never outside the package."""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
PROMPTS = DATA / "prompts"  # train.jsonl, train_extra.jsonl (scripts/make_prompts.py), val.jsonl
TARGETS = DATA / "targets"  # config.json of each target alias
