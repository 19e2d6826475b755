"""The summary guard on its own: accepted, not shrinking, dropped file lists."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pi_context.compaction.file_ops import format_file_operations
from pi_context.compaction.guard import check_summary

READ = ["src/a.py", "docs/b.md"]
MODIFIED = ["src/c.py"]
SUMMARY = "## Goal\nFix the parser.\n" + format_file_operations(READ, MODIFIED)


def test_summary_that_shrinks_and_keeps_the_file_lists_is_accepted() -> None:
    assert (
        check_summary(
            SUMMARY,
            tokens_before=10_000,
            tokens_after=1_200,
            read_files=READ,
            modified_files=MODIFIED,
        )
        is None
    )


def test_without_tracked_files_only_the_size_counts() -> None:
    assert (
        check_summary("short", tokens_before=50, tokens_after=49, read_files=[], modified_files=[])
        is None
    )


def test_size_check_is_skipped_without_a_usable_tokens_before() -> None:
    for before in (None, 0, -5):
        assert (
            check_summary(
                SUMMARY,
                tokens_before=before,
                tokens_after=9_999,
                read_files=READ,
                modified_files=MODIFIED,
            )
            is None
        )


def test_summary_that_would_not_shrink_the_context_is_rejected_with_the_numbers() -> None:
    for after in (10_000, 12_345):
        reason = check_summary(
            SUMMARY,
            tokens_before=10_000,
            tokens_after=after,
            read_files=READ,
            modified_files=MODIFIED,
        )
        assert reason == (
            f"summary would not shrink the context (10000 tokens before, about {after} after)"
        )


def test_size_is_checked_before_the_file_lists() -> None:
    reason = check_summary(
        "no lists", tokens_before=100, tokens_after=100, read_files=READ, modified_files=MODIFIED
    )
    assert reason is not None
    assert reason.startswith("summary would not shrink the context")


def test_summary_that_dropped_the_file_lists_is_rejected_naming_them() -> None:
    without_lists = "## Goal\nFix the parser.\n"
    reason = check_summary(
        without_lists,
        tokens_before=10_000,
        tokens_after=500,
        read_files=READ,
        modified_files=MODIFIED,
    )
    assert reason == (
        "summary dropped tracked files from its file lists (src/a.py, docs/b.md, src/c.py)"
    )


def test_dropping_only_the_modified_files_is_rejected() -> None:
    only_read = "## Goal\n" + format_file_operations(READ, [])
    reason = check_summary(
        only_read, tokens_before=10_000, tokens_after=500, read_files=READ, modified_files=MODIFIED
    )
    assert reason == "summary dropped tracked files from its file lists (src/c.py)"


def test_more_than_three_missing_files_are_elided() -> None:
    files = [f"f{i}.py" for i in range(5)]
    reason = check_summary(
        "x", tokens_before=None, tokens_after=1, read_files=files, modified_files=[]
    )
    assert reason == "summary dropped tracked files from its file lists (f0.py, f1.py, f2.py …)"


PATHS = st.lists(
    st.text(st.characters(blacklist_categories=["Cs"]), min_size=1, max_size=12), max_size=5
)


@settings(max_examples=100, deadline=None)
@given(st.text(min_size=1, max_size=40).filter(str.strip), PATHS, PATHS)
def test_a_summary_ending_in_its_own_file_lists_always_passes_the_file_check(
    text: str, read: list[str], modified: list[str]
) -> None:
    """Why the file check cannot fire through the engine: model and offline summaries get
    ``format_file_operations`` of the preparation's own lists appended before the guard runs."""
    summary = text + format_file_operations(read, modified)
    assert (
        check_summary(
            summary, tokens_before=None, tokens_after=0, read_files=read, modified_files=modified
        )
        is None
    )


def test_an_empty_summary_is_rejected_even_with_its_file_lists_appended() -> None:
    # a summarizer that answered "" would otherwise replace the history by the file lists alone
    for text in ("", "  \n", format_file_operations(READ, MODIFIED)):
        reason = check_summary(
            text, tokens_before=10_000, tokens_after=10, read_files=READ, modified_files=MODIFIED
        )
        assert reason == "the summarizer returned an empty summary"
