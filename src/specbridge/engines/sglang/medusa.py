"""Medusa on SGLang: none (an absent range)."""

from __future__ import annotations

from ..spec import (
    Dispatch,
    FamilyRange,
)

# --- Medusa: SGLang has none ----------------------------------------------------------------------------------------------
# sglang/srt/speculative/spec_info.py SpeculativeAlgorithm: EAGLE, EAGLE3 (0.4.8.post1, 0.5.1.post3), + STANDALONE (0.5.2),
# + DFLASH, NGRAM (0.5.11), + DSPARK, FROZEN_KV_MTP (0.5.16), + UNO (0.5.23); no file of any of these wheels names Medusa
SGL_MEDUSA_READ = ("0.4.8.post1", "0.5.1.post3", "0.5.2", "0.5.11", "0.5.16", "0.5.23")
RANGES = (
    FamilyRange(
        engine="sglang",
        family="medusa",
        first="0.4.8",
        last=None,
        dispatch=Dispatch("sglang", {}, "", cite="sglang/srt/speculative/spec_info.py SpeculativeAlgorithm"),
        classes={},
        begins="no SpeculativeAlgorithm and no model file for Medusa in any wheel read",
        versions_read=SGL_MEDUSA_READ,
        absent="no MEDUSA in sglang/srt/speculative/spec_info.py SpeculativeAlgorithm and no file naming Medusa in the "
        f"{', '.join(SGL_MEDUSA_READ)} wheels",
    ),
)
