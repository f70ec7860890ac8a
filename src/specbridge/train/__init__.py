"""`specbridge train`: target data -> hidden-state capture -> EAGLE-3 drafter (needs torch).

Modules: data (prompts, target-generated responses), capture (aux hidden states on disk),
vocab (d2t/t2d), trainer (TTT loop, DDP, checkpoints), save (serving layouts).
"""
