"""The digest forms are compared as digests: right ones match, any wrong part fails."""

from __future__ import annotations

import hashlib
from typing import Any

from tests.conformance.digests import rows_digest, same_rows, text_matches

ROWS: list[Any] = [["a1", "user", 3, "="], ["b2", "assistant", 7, "m:0123456789abcdef"]]


def test_a_row_digest_matches_the_rows_it_was_made_from() -> None:
    digest = rows_digest(ROWS, head=1, tail=1)
    assert digest["n"] == 2
    assert same_rows(digest, ROWS)
    assert same_rows(ROWS, ROWS)


def test_row_digest_is_sha256_of_compact_json() -> None:
    text = '[["a1","user",3,"="],["b2","assistant",7,"m:0123456789abcdef"]]'
    assert rows_digest(ROWS)["sha256"] == hashlib.sha256(text.encode()).hexdigest()


def test_a_wrong_row_digest_fails() -> None:
    good = rows_digest(ROWS, head=1, tail=1)
    assert not same_rows({**good, "sha256": "0" * 64}, ROWS)
    assert not same_rows({**good, "n": 3}, ROWS)
    assert not same_rows({**good, "head": [["zz", "user", 3, "="]]}, ROWS)
    assert not same_rows({**good, "tail": [["zz", "user", 3, "="]]}, ROWS)
    assert not same_rows(good, ROWS[:1])


def test_a_value_in_neither_form_never_matches() -> None:
    assert not same_rows({"rows": ROWS}, ROWS)
    assert not same_rows(None, [])
    assert not text_matches({"length": 1}, "x")
    assert not text_matches(None, "")


def test_text_digest_counts_utf16_and_hashes_lone_surrogates_as_replacement() -> None:
    text = "a😀\ud800"
    digest = {
        "length": 4,
        "sha256": hashlib.sha256("a😀\ufffd".encode()).hexdigest(),
    }
    assert text_matches(digest, text)
    assert not text_matches({**digest, "length": 3}, text)
    assert not text_matches(digest, "a😀")
    assert text_matches("plain", "plain")
