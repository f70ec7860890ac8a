"""The files a drafter carries beside its weights that engines read by name: one place for each name (the engine rows'
`side_files`, the checkpoint facts their expressions read, the rules, convert and eval all take it from here).
No imports: every check reads it."""

# z-lab's DFlash mask embedding ({embedding, mask_token_id} or a bare tensor, torch.save'd): vLLM's
# qwen3_dflash.py _read_mask_embedding, SGLang's dflash_worker_v2.py _maybe_merge_trained_mask_embedding
MASK_FILE = "mask_embedding.pt"
