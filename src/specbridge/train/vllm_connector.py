"""A CPU-safe hidden-states KV connector for vLLM's `extract_hidden_states` method (vLLM side only).

Loaded BY vLLM (kv_transfer_config: kv_connector="SpecbridgeHiddenStatesConnector",
kv_connector_module_path="specbridge.train.vllm_connector") inside the vLLM venv; never imported by the
main specbridge process.

Why not the stock connector: vLLM 0.32.0's
`vllm/distributed/kv_transfer/kv_connector/v1/example_hidden_states_connector.py`
(ExampleHiddenStatesConnector) copies each finished request's hidden states out of the cache-only KV
layer on a `torch.cuda.Stream`, into `pin_memory=True` host memory, and polls `torch.cuda.Event`s in
`get_finished` - all CUDA-only. Everything else it does (scheduler side: a file name per request,
`request_finished` holding the blocks until the copy is done and reporting `hidden_states_path` in the
request's kv_transfer_params; worker side: finding the one CacheOnlyAttentionLayer) is device-agnostic,
so this class keeps it and replaces only the copy: a plain synchronous index + `save_file` on the
worker. A request then counts as "done sending" in the very `get_finished` call that wrote it.
"""

from __future__ import annotations

import os

import torch
from safetensors.torch import save_file
from vllm.distributed.kv_transfer.kv_connector.v1.example_hidden_states_connector import (
    ExampleHiddenStatesConnector,
    PendingSave,
    extract_from_kv_cache,
)


class _Written:
    """Stands in for the stock connector's CUDA copy event: the synchronous write is already done."""

    def query(self) -> bool:
        return True


class SpecbridgeHiddenStatesConnector(ExampleHiddenStatesConnector):
    def _submit_async_write(self, pending: PendingSave) -> None:
        if not self._is_tp_rank_zero:  # the cache-only layer is replicated; rank 0 writes, as upstream
            return
        assert self._kv_cache is not None
        block_ids = torch.tensor(pending.block_ids, dtype=torch.long)
        offsets = torch.arange(self._block_size, dtype=torch.long)
        slots = (offsets[None, :] + block_ids[:, None] * self._block_size).flatten()
        states = extract_from_kv_cache(self._kv_cache, slots, pending.token_ids.shape[0]).clone()
        os.makedirs(os.path.dirname(pending.filename), exist_ok=True)
        save_file({"hidden_states": states.contiguous(), "token_ids": pending.token_ids.clone()}, pending.filename)
        lock_fd = self._lock_fds.pop(pending.req_id, None)  # only with use_synchronization_lock (we turn it off)
        if lock_fd is not None:
            os.close(lock_fd)
        self._req_copy_events[pending.req_id] = _Written()
