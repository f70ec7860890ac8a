"""The fast path reads the plain forms of its commands' options itself (argparse costs ~5 ms of imports): whatever it
reads, argparse reads the same; whatever it does not, argparse reads."""

from __future__ import annotations

import random

import pytest

from specbridge.cli.optspec import OPTIONS, _argparse, _plain_forms, parse_fast


def _words(command: str) -> list[str]:
    flags = [f for o in OPTIONS[command] for f in o.flags]
    longs = [f for f in flags if f.startswith("--")]
    return [
        *flags,
        *(f"{f}=x" for f in longs),
        *(f"{f}=" for f in longs),
        "--",
        "-",
        "",
        "x",
        "./d",
        "a,b",
        "-evllm",
        "--eng",
        "-1",
        "--bogus",
    ]


@pytest.mark.parametrize("command", sorted(OPTIONS))
def test_plain_forms_read_as_argparse_reads_them(command):
    rng = random.Random(3)
    words = _words(command)
    read = 0
    for _ in range(3000):
        argv = [rng.choice(words) for _ in range(rng.randint(0, 6))]
        plain, by_argparse = _plain_forms(command, argv), _argparse(command, argv)
        if plain is not None:
            read += 1
            assert plain == by_argparse, argv
        assert parse_fast(command, argv) == by_argparse, argv
    assert read > 50  # the plain forms were met, not only handed on


def test_the_usual_check_line_is_read_without_argparse():
    got = _plain_forms("check", ["d", "-e", "vllm", "--engine=sglang==0.5.11", "--json", "--fail-on", "warning"])
    assert got is not None
    assert got["path"] == "d" and got["engine"] == ["vllm", "sglang==0.5.11"] and got["as_json"] and got["fail_on"] == ["warning"]
