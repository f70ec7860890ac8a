"""SGLang's plain draft model rows (--speculative-algorithm STANDALONE): DRAFT_MODEL."""

from __future__ import annotations

from ..spec import (
    DraftModelRange,
    all_agreed,
)

# --- plain draft models (--speculative-algorithm STANDALONE): sglang/srt/speculative/standalone_worker*.py -----------
SA_WORKER = "sglang/srt/speculative/standalone_worker_v2.py (_validate_vocab_compatibility)"
# run: SGLang's parser, its vocabulary check fed as the worker feeds it, and its load of the draft's own class
SA_TEST = "tests/test_conformance_sglang_standalone.py"
DRAFT_MODEL = (
    DraftModelRange(
        engine="sglang",
        first="0.4.6.post5",
        last="0.5.1.post3",
        method="",
        cite="sglang/srt/server_args.py @ 0.4.10.post2, 0.5.1, 0.5.1.post3 (--speculative-algorithm choices EAGLE, EAGLE3, NEXTN)",
        versions_read=("0.4.10.post2", "0.5.1", "0.5.1.post3"),
        begins="no STANDALONE algorithm before 0.5.2 (read at 0.4.10.post2, 0.5.1 and 0.5.1.post3; older modelled releases are placed here unread)",
        refusal="argument --speculative-algorithm: invalid choice: 'STANDALONE'",
        runs=all_agreed(SA_TEST, "2026-12-02", 3, "0.4.8.post1", "0.5.1.post3"),
    ),
    DraftModelRange(
        engine="sglang",
        first="0.5.2",
        last="0.5.14",
        method="STANDALONE",
        cite="sglang/srt/server_args.py @ 0.5.2 (choices gain STANDALONE), sglang/srt/speculative/spec_info.py, "
        "standalone_worker.py @ 0.5.2–0.5.14 (no vocabulary check)",
        versions_read=("0.5.2", "0.5.3", "0.5.11", "0.5.12", "0.5.13", "0.5.14"),
        begins="sglang/srt/speculative/standalone_worker.py and SpeculativeAlgorithm.STANDALONE appear in 0.5.2",
        runs=all_agreed(SA_TEST, "2026-12-02", 3, "0.5.2", "0.5.11"),
    ),
    DraftModelRange(
        engine="sglang",
        first="0.5.15",
        last=None,
        method="STANDALONE",
        cite=f"{SA_WORKER} @ 0.5.15–0.5.23; sglang/srt/managers/tp_worker.py @ 0.5.15–0.5.23 (TpModelWorker.__init__: "
        "`if skip_tokenizer_init or self.is_draft_worker: self.tokenizer = None`)",
        versions_read=("0.5.15", "0.5.17", "0.5.19", "0.5.20", "0.5.23"),
        begins="StandaloneWorkerV2 validates the vocabulary at start-up (absent in 0.5.14)",
        vocab_size_raises="ValueError: STANDALONE speculative decoding requires the draft model to share the same vocabulary "
        "as the target model, but got target vocab_size={target} and draft vocab_size={draft}.",
        # no token_map_raises: the validator compares the tokenizers' get_vocab() only when both workers have one, and
        # a draft worker never has (tp_worker.py above); the run hands it what the worker does and nothing is raised
        # for a shifted map of the same size (handed the draft's own tokenizer, it would raise the token-to-id error)
        runs=all_agreed(SA_TEST, "2026-12-02", 3, "0.5.16", "0.5.19", "0.5.20", "0.5.23"),
    ),
)
