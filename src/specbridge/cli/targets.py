"""`--target` as people give it, resolved the same way by every command: a model directory, its
config.json, a HF cache directory, a Hub id, or a known alias (`smollm2-135m`)."""

from __future__ import annotations

from pathlib import Path

from ..checkpoint.aliases import KNOWN_TARGETS, alias_config_dir, is_alias, materialized_dir
from ..checkpoint.hub import hub_ref_or_none
from .contract import CliError


def open_target_arg(spec: str | Path):
    """The target's facts for the header-only rules (config.json; weights only where present)."""
    from ..checkpoint.target import open_target
    from .guards import refuse_drafter_as_target

    info = open_target(alias_config_dir(str(spec)) if is_alias(spec) else spec)
    refuse_drafter_as_target(info)
    return info


def servable_target(spec: str | Path):
    """(what to hand the engine, the target's facts or None): an absolute model directory, or a Hub id
    the engine downloads itself. Anything else would print a command that cannot start: refused (exit 1)."""
    from ..checkpoint.errors import CheckpointError

    text = str(spec).strip()
    if is_alias(text):
        full = materialized_dir(text.lower())
        if not (full / "config.json").is_file():
            raise CliError(
                f"target {text!r} is a specbridge alias with no model on disk yet: run `specbridge eval … --target {text}` "
                f"once (it materializes {full}), or pass a model directory",
                1,
            )
        return str(full), open_target_arg(full)
    p = Path(text)
    if p.exists():
        try:
            info = open_target_arg(p)
        except CheckpointError as e:
            raise CliError(f"target {text!r} is not a model directory ({e})", 1) from None
        return str(info.path.absolute()), info
    if hub_ref_or_none(text) is not None:
        try:
            return text, open_target_arg(text)
        except CheckpointError:
            return text, None  # the engine resolves Hub ids itself; said in a note
    known = ", ".join(KNOWN_TARGETS)
    raise CliError(f"target {text!r} is not a model directory, a Hub id (org/name) or a known alias ({known})", 1)
