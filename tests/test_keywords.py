"""Constructors with many keywords name the closest one when a keyword is misspelt."""

from __future__ import annotations

from typing import Any

import pytest

from pi_context import CompactionSettings, ResourceLoader, RetrySettings, Settings
from pi_context.tools.bash import BashTool
from pi_context.tools.read import ReadTool


@pytest.mark.parametrize(
    ("build", "typo", "meant"),
    [
        (ResourceLoader, "trsted", "trusted"),
        (ResourceLoader, "no_context_file", "no_context_files"),
        (CompactionSettings, "reserv_tokens", "reserve_tokens"),
        (RetrySettings, "max_retry", "max_retries"),
        (Settings, "globl_data", "global_data"),
        (BashTool, "default_timout", "default_timeout"),
        (ReadTool, "images_unsupported", "images_unsupported_by"),
    ],
)
def test_a_misspelt_keyword_names_the_closest_parameter(build: Any, typo: str, meant: str) -> None:
    with pytest.raises(TypeError, match=rf"'{typo}'; did you mean '{meant}'\?"):
        build(**{typo: 1})


def test_a_keyword_with_nothing_close_lists_the_known_ones() -> None:
    with pytest.raises(
        TypeError, match=r"'zzz'; it takes base_delay_ms, enabled, max_delay_ms, max_retries$"
    ):
        RetrySettings(zzz=1)  # type: ignore[call-arg]


def test_correct_keywords_still_construct() -> None:
    assert RetrySettings(max_retries=5).max_retries == 5
    assert ResourceLoader("/tmp", trusted=True).trusted is True
