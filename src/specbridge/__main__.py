"""`python -m specbridge` is the `specbridge` command."""

from .cli.entry import run

run()
