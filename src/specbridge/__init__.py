"""specbridge: speculative-decoding drafters from training to serving, with nothing lost on the way."""

__version__ = "0.1.0"
