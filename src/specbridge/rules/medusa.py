"""H rules: Medusa heads (vLLM `method: medusa`, medusa.py). What a Medusa checkpoint needs beyond its load: the
launch line's draft steps against the heads it was trained with. The load itself (names, biases, token_map) is the
engine rows' (engines/vllm/medusa.py MEDUSA_CLASS), reported by the L rules."""

from __future__ import annotations

from collections.abc import Iterator

from .context import Context
from .findings import WARNING
from .registry import Hit, rule


@rule(
    "H001",
    "Medusa heads against the launch line's num_speculative_tokens",
    severity=WARNING,
    families=("medusa",),
    fix="set vLLM's `num_speculative_tokens` to the number of trained heads (`medusa_num_heads`).",
)
def heads_against_steps(c: Context) -> Iterator[Hit]:
    """With `--launch`: vLLM builds one Medusa head per drafted token, whatever the checkpoint holds:
    `num_speculative_tokens` is required for method medusa (a Medusa config has no `n_predict` to default it from)
    and is written into the draft config's `num_heads` (`MedusaConfig.num_lookahead_tokens` setter,
    vllm/transformers_utils/configs/medusa.py; vllm/config/speculative.py, every release read). Above
    `medusa_num_heads`, the extra heads have no tensors and stay at random initialisation: nothing fails, their
    drafts are rejected and widen every verify. Below it, the remaining heads' tensors are skipped and each step
    accepts at most `num_speculative_tokens` + 1 tokens. The engine rows (`DraftClass.launch_checks`, code H001)
    say what each release does.
    """
    from .dflash import _launch_rows  # the class's launch rows of one code, for a line whose method builds it

    for h in _launch_rows(c, "H001"):
        yield Hit(h.severity, h.message, h.fix or f"launch with num_speculative_tokens {c.rep.ns.get('L')} (the heads trained)")
