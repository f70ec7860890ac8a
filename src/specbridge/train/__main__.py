"""`python -m specbridge.train ...` (and `torchrun --nproc-per-node N -m specbridge.train ...`):
the `specbridge train` command without the rest of the CLI."""

import typer

from ..cli.train_cmd import train_command

if __name__ == "__main__":
    typer.run(train_command)
