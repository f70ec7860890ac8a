"""`python -m specbridge.train ...` (and `torchrun --nproc-per-node N -m specbridge.train ...`):
the `specbridge train` command without the rest of the CLI."""

import sys

import typer

from ..cli.entry import modernise
from ..cli.train_cmd import train_command

if __name__ == "__main__":
    sys.argv[1:] = modernise(["train", *sys.argv[1:]])[1:]  # old spellings (--steps) as `specbridge train` reads them
    typer.run(train_command)
