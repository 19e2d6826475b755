"""Extra pictx configurations from the command line (``--contender NAME=JSON``)."""

from __future__ import annotations

import pytest
from benchmarks.economy.contenders import parse_contender, pictx_contenders


def test_a_contender_is_a_name_and_compaction_settings() -> None:
    name, settings = parse_contender('keep 8k={"keepRecentTokens": 8000}')
    assert (name, settings) == ("pictx keep 8k", {"keepRecentTokens": 8000})
    extra = pictx_contenders([(name, settings)])[-1]
    assert extra.name == "pictx keep 8k"
    assert extra.compaction == {"keepRecentTokens": 8000}
    # the same code as the built-in pictx contenders, so a re-run reuses it the same way
    assert extra.version == pictx_contenders()[0].version


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ('{"keepRecentTokens": 1}', "expected NAME=JSON"),
        ("lean", "expected NAME=JSON"),
        ("lean={", "not JSON"),
        ("lean=[1]", "must be a JSON object"),
    ],
)
def test_a_malformed_contender_says_what_is_wrong(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_contender(spec)
