"""What the eval tests of every drafter family compare with: greedy speculative decoding run step by step as an engine
runs it (each family's test gives only how its drafter drafts one chain), the prompts they measure, and the CLI run."""

from __future__ import annotations

import json
from pathlib import Path

import torch

PROMPTS = [[5, 17, 3, 40, 22, 9], [1, 2, 3, 4], [60, 61, 7, 7, 30, 12, 11, 80, 2], [33]]


@torch.no_grad()
def plain_speculative_decode(target, prompt: list[int], k: int, max_new: int, draft) -> tuple[int, int]:
    """The target's greedy token after the prompt, then per verify step: `draft(seq)` → the k target ids drafted after
    the verified sequence (computed from scratch: nothing shared with eval), the target verifies them greedily, advance
    by accepted + 1. Returns (drafts, accepted)."""
    seq = list(prompt)
    seq.append(int(target(torch.tensor([seq])).logits[0, -1].argmax()))
    gen, drafts, accepted = 1, 0, 0
    while gen < max_new:
        chain = draft(seq)
        pred = target(torch.tensor([seq + chain])).logits[0, len(seq) - 1 :].argmax(-1).tolist()
        a = 0
        while a < k and chain[a] == pred[a]:
            a += 1
        drafts, accepted = drafts + 1, accepted + a
        seq += chain[:a] + [pred[a]]
        gen += a + 1
    return drafts, accepted


def write_prompts(path: Path) -> Path:
    """PROMPTS as the JSONL of token ids that `eval --prompts` reads."""
    path.write_text("".join(json.dumps({"prompt_ids": p}) + "\n" for p in PROMPTS))
    return path


def eval_cli(ddir, tdir, prompts, *extra):
    """`specbridge eval … --json` in this process (typer's runner: the same command, without a second interpreter)."""
    from typer.testing import CliRunner

    from specbridge.cli.main import app

    r = CliRunner().invoke(
        app, ["eval", str(ddir), "--target", str(tdir), "--prompts", str(prompts), "--max-new-tokens", "16", "--json", *extra]
    )
    assert r.exit_code == 0, (r.exit_code, r.output, r.exception)
    return json.loads(r.stdout)
