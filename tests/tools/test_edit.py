"""The edit tool: exact unique replacement, fuzzy matching, line endings, diffs, errors."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pi_context.errors import ToolError
from pi_context.tools import EditTool
from pi_context.tools.edit import (
    MAX_EDIT_BYTES,
    apply_edits,
    count_occurrences,
    fuzzy_normalize,
    splice,
    splice_original,
)

from .conftest import Runner


def edit(old: str, new: str) -> dict[str, str]:
    return {"oldText": old, "newText": new}


async def test_single_edit_result_and_details(call: Runner, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("foo\nbar\nfoo\n")
    out = await call(EditTool(), path="f.txt", edits=[edit("bar\n", "BAR\nBAZ\n")])
    assert not out.is_error
    assert out.text == "Successfully replaced 1 block(s) in f.txt."
    assert (tmp_path / "f.txt").read_text() == "foo\nBAR\nBAZ\nfoo\n"
    assert out.details["diff"] == " 1 foo\n-2 bar\n+2 BAR\n+3 BAZ\n 3 foo"
    assert out.details["patch"] == (
        "--- f.txt\n+++ f.txt\n@@ -1,3 +1,4 @@\n foo\n-bar\n+BAR\n+BAZ\n foo\n"
    )
    assert out.details["firstChangedLine"] == 2
    assert list(out.details) == ["diff", "patch", "firstChangedLine"]


async def test_several_edits_match_the_original(call: Runner, tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text("a = 1\nb = 2\nc = 3\n")
    out = await call(
        EditTool(), path="f.py", edits=[edit("c = 3", "c = 30"), edit("a = 1", "a = 10")]
    )
    assert out.text == "Successfully replaced 2 block(s) in f.py."
    assert (tmp_path / "f.py").read_text() == "a = 10\nb = 2\nc = 30\n"


async def test_not_found_single_and_multi(call: Runner, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("hello\n")
    out = await call(EditTool(), path="f.txt", edits=[edit("bye", "x")])
    assert out.is_error
    assert out.details == {}
    assert out.text == (
        "Could not find the exact text in f.txt. The old text must match exactly including all "
        "whitespace and newlines."
    )
    out = await call(EditTool(), path="f.txt", edits=[edit("hello", "x"), edit("bye", "y")])
    assert out.text == (
        "Could not find edits[1] in f.txt. The oldText must match exactly including all "
        "whitespace and newlines."
    )
    assert (tmp_path / "f.txt").read_text() == "hello\n"


async def test_ambiguous(call: Runner, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("x\nx\nx\n")
    out = await call(EditTool(), path="f.txt", edits=[edit("x", "y")])
    assert out.text == (
        "Found 3 occurrences of the text in f.txt. The text must be unique. Please provide more "
        "context to make it unique."
    )
    out = await call(EditTool(), path="f.txt", edits=[edit("x\nx\nx", "z"), edit("x", "y")])
    assert out.text.startswith(
        "Found 3 occurrences of edits[1] in f.txt. Each oldText must be unique."
    )


async def test_uniqueness_is_judged_on_the_fuzzy_form(call: Runner, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("foo\nfoo \n")
    out = await call(EditTool(), path="f.txt", edits=[edit("foo\n", "bar\n")])
    assert out.text.startswith("Found 2 occurrences of the text in f.txt.")


async def test_overlap(call: Runner, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("abcdef\n")
    out = await call(EditTool(), path="f.txt", edits=[edit("cde", "X"), edit("abc", "Y")])
    assert out.text == (
        "edits[1] and edits[0] overlap in f.txt. Merge them into one edit or target disjoint regions."
    )


async def test_no_op(call: Runner, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("same\n")
    out = await call(EditTool(), path="f.txt", edits=[edit("same", "same")])
    assert out.text.startswith(
        "No changes made to f.txt. The replacement produced identical content."
    )
    out = await call(EditTool(), path="f.txt", edits=[edit("sa", "sa"), edit("me", "me")])
    assert out.text == "No changes made to f.txt. The replacements produced identical content."


async def test_empty_old_text(call: Runner, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("a")
    out = await call(EditTool(), path="f.txt", edits=[edit("", "b")])
    assert out.text == "oldText must not be empty in f.txt."
    out = await call(EditTool(), path="f.txt", edits=[edit("a", "b"), edit("", "c")])
    assert out.text == "edits[1].oldText must not be empty in f.txt."


async def test_missing_file(call: Runner) -> None:
    out = await call(EditTool(), path="nope.txt", edits=[edit("a", "b")])
    assert out.text == "Could not edit file: nope.txt. Error code: ENOENT."


async def test_argument_repairs(call: Runner, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("one two three")
    assert not (
        await call(EditTool(), path="f.txt", edits='[{"oldText":"one","newText":"1"}]')
    ).is_error
    assert not (
        await call(EditTool(), path="f.txt", edits={"oldText": "two", "newText": "2"})
    ).is_error
    assert not (await call(EditTool(), path="f.txt", oldText="three", newText="3")).is_error
    assert (tmp_path / "f.txt").read_text() == "1 2 3"
    out = await call(EditTool(), path="f.txt", edits=[])
    assert out.text == "Edit tool input is invalid. edits must contain at least one replacement."
    out = await call(EditTool(), path="f.txt", edits=[{"oldText": "1"}])
    assert "edits.0: must have required property 'newText'" in out.text


async def test_fuzzy_match_rewrites_touched_lines_only(call: Runner, tmp_path: Path) -> None:
    original = "keep \u201cthis\u201d  \nsay \u201chi\u201d   \nend\n"
    (tmp_path / "f.txt").write_text(original)
    out = await call(EditTool(), path="f.txt", edits=[edit('say "hi"', 'say "hello"')])
    assert not out.is_error, out.text
    assert (tmp_path / "f.txt").read_text() == 'keep \u201cthis\u201d  \nsay "hello"\nend\n'


async def test_crlf_and_bom_survive(call: Runner, tmp_path: Path) -> None:
    (tmp_path / "w.txt").write_bytes(b"\xef\xbb\xbfone\r\ntwo\r\nthree\r\n")
    out = await call(EditTool(), path="w.txt", edits=[edit("two\n", "2\n2b\n")])
    assert not out.is_error, out.text
    assert (tmp_path / "w.txt").read_bytes() == b"\xef\xbb\xbfone\r\n2\r\n2b\r\nthree\r\n"
    assert out.details["diff"] == " 1 one\n-2 two\n+2 2\n+3 2b\n 3 three"


async def test_long_context_is_elided(call: Runner, tmp_path: Path) -> None:
    lines = [f"line{i}" for i in range(1, 21)]
    (tmp_path / "f.txt").write_text("\n".join(lines) + "\n")
    out = await call(EditTool(), path="f.txt", edits=[edit("line10\n", "TEN\n")])
    assert out.details["diff"].split("\n") == [
        "    ...",
        "  6 line6",
        "  7 line7",
        "  8 line8",
        "  9 line9",
        "-10 line10",
        "+10 TEN",
        " 11 line11",
        " 12 line12",
        " 13 line13",
        " 14 line14",
        "    ...",
    ]
    assert "@@ -6,9 +6,9 @@" in out.details["patch"]


def test_apply_edits_raises_tool_error() -> None:
    with pytest.raises(ToolError, match="Could not find"):
        apply_edits("abc", [("zzz", "y")], "p")


def test_fuzzy_normalize() -> None:
    assert fuzzy_normalize("a\u2014b \u00a0\n\u2018q\u2019\u3000x") == "a-b\n'q' x"


@given(
    # Lone CRs are left out: deleting the text between a lone CR and an LF fuses them into one
    # CRLF, a line-ending change no splice can avoid (pi behaves the same).
    st.lists(st.sampled_from(["a", "b", "\n", "\r\n", "x"]), max_size=30).map("".join),
    st.text(alphabet="yz\n", max_size=5),
)
def test_splice_original_matches_the_normalized_edit(original: str, replacement: str) -> None:
    normalized = original.replace("\r\n", "\n").replace("\r", "\n")
    if "x" not in normalized:
        return
    start = normalized.index("x")
    spans = [(start, start + 1, replacement)]
    written = splice_original(original, spans)
    assert written.replace("\r\n", "\n").replace("\r", "\n") == splice(normalized, spans)
    # Bytes outside the replaced span are untouched.
    assert written.startswith(original[: original.index("x")])


async def test_undecodable_bytes_elsewhere_survive(call: Runner, tmp_path: Path) -> None:
    (tmp_path / "latin1.txt").write_bytes(b"caf\xe9\nname = 1\n")
    out = await call(EditTool(), path="latin1.txt", edits=[edit("name = 1", "name = 2")])
    assert not out.is_error
    assert (tmp_path / "latin1.txt").read_bytes() == b"caf\xe9\nname = 2\n"
    assert out.details["diff"] == " 1 caf\ufffd\n-2 name = 1\n+2 name = 2"


async def test_cr_only_file(call: Runner, tmp_path: Path) -> None:
    (tmp_path / "mac.txt").write_bytes(b"one\rtwo\rthree")
    out = await call(EditTool(), path="mac.txt", edits=[edit("two", "2\n2b")])
    assert not out.is_error
    assert (tmp_path / "mac.txt").read_bytes() == b"one\r2\r2b\rthree"


@given(
    st.text(alphabet="abc \n", max_size=40),
    st.integers(0, 40),
    st.integers(1, 6),
    st.text(alphabet="XYZ\n", max_size=6),
)
def test_a_unique_exact_edit_is_plain_replacement(
    text: str, start: int, size: int, new: str
) -> None:
    old = text[start : start + size]
    fuzzy_text = fuzzy_normalize(text)
    if not old or count_occurrences(fuzzy_text, fuzzy_normalize(old)) != 1 or old == new:
        return
    spans = apply_edits(text, [(old, new)], "p")
    assert splice(text, spans) == text.replace(old, new, 1)


async def test_directory_is_refused(call: Runner, tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    out = await call(EditTool(), path="d", edits=[edit("a", "b")])
    assert out.text == "Could not edit file: d. Error code: EISDIR."


fancy_line = st.lists(
    st.sampled_from(["a", "b", " ", "\u201c", "\u2019", "\u00a0", "-", "\u2014"]), max_size=8
).map("".join)


@given(st.lists(fancy_line, min_size=2, max_size=8), st.data())
def test_fuzzy_edit_keeps_untouched_lines_byte_for_byte(
    lines: list[str], data: st.DataObject
) -> None:
    target = data.draw(st.integers(0, len(lines) - 1))
    marker = f"MARK{target}"
    lines = [*lines]
    lines[target] = lines[target] + " " + marker + "\u00a0 "  # trailing blanks force fuzzy mode
    content = "\n".join(lines) + "\n"
    old = f"{fuzzy_normalize(lines[target])}\n"  # the model typed the plain form of the line
    if count_occurrences(fuzzy_normalize(content), old) != 1:
        return
    spans = apply_edits(content, [(old, "NEW\n")], "p")
    result = splice(content, spans).split("\n")
    for i, line in enumerate(lines):
        if i != target:
            assert result[i] == line
    assert result[target] == "NEW"


@pytest.mark.parametrize(
    ("edits", "message"),
    [
        ([edit("nope", "x")], "Could not find the exact text in {p}. The old text must match"),
        ([edit("a", "b"), edit("zz", "y")], "Could not find edits[1] in {p}. The oldText must"),
        ([edit("dup", "x")], "Found 2 occurrences of the text in {p}. The text must be unique."),
        ([edit("", "x")], "oldText must not be empty in {p}."),
    ],
)
async def test_error_messages_keep_paths_with_braces(
    call: Runner, tmp_path: Path, edits: list[dict[str, str]], message: str
) -> None:
    name = "tmpl{0}{name}.txt"
    (tmp_path / name).write_text("a\ndup\ndup\n")
    out = await call(EditTool(), path=name, edits=edits)
    assert out.is_error
    assert out.text.startswith(message.replace("{p}", name))


# --- overlapping occurrences, hostile files --------------------------------------------------


async def test_overlapping_occurrences_are_ambiguous(call: Runner, tmp_path: Path) -> None:
    target = tmp_path / "f.js"
    target.write_text("}\n}\n}\n")
    out = await call(EditTool(), path="f.js", edits=[edit("}\n}\n", "}\n")])
    assert out.is_error
    assert out.text == (
        "Found 2 occurrences of the text in f.js. The text must be unique. Please provide more "
        "context to make it unique."
    )
    assert target.read_text() == "}\n}\n}\n"


async def test_overlapping_occurrences_are_ambiguous_in_fuzzy_mode(
    call: Runner, tmp_path: Path
) -> None:
    target = tmp_path / "f.txt"
    target.write_text("'}\n'}\n'}\n")
    # Curly quotes are not in the file: the match is made on the fuzzy form.
    out = await call(
        EditTool(), path="f.txt", edits=[edit("x", "y"), edit("\u2019}\n\u2019}\n", "-")]
    )
    assert out.text.startswith("Could not find edits[0] in f.txt.")
    out = await call(EditTool(), path="f.txt", edits=[edit("\u2019}\n\u2019}\n", "-")])
    assert out.text.startswith("Found 2 occurrences of the text in f.txt.")
    assert target.read_text() == "'}\n'}\n'}\n"


@given(st.text(alphabet="ab", max_size=30), st.text(alphabet="ab", min_size=1, max_size=6))
def test_count_occurrences_counts_every_start(text: str, needle: str) -> None:
    starts = sum(text.startswith(needle, i) for i in range(len(text)))
    disjoint = text.count(needle)
    assert count_occurrences(text, needle) == (starts if disjoint == 1 else disjoint)


async def test_a_fifo_is_refused_without_blocking(call: Runner, tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    out = await call(EditTool(), path="pipe", edits=[edit("a", "b")])
    assert out.is_error
    assert out.text == "Cannot edit pipe: it is a named pipe (FIFO), not a regular file."


async def test_a_socket_is_refused(call: Runner, tmp_path: Path) -> None:
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(tmp_path / "sock"))
        out = await call(EditTool(), path="sock", edits=[edit("a", "b")])
    finally:
        server.close()
    assert out.text == "Cannot edit sock: it is a socket, not a regular file."


async def test_a_link_out_of_the_project_is_refused(call: Runner, tmp_path: Path) -> None:
    outside = tmp_path.parent / f"{tmp_path.name}-outside.txt"
    outside.write_text("secret = 1\n")
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").symlink_to(outside)
    try:
        out = await Runner(project)(EditTool(), path="notes.txt", edits=[edit("1", "2")])
        assert out.is_error
        assert out.text == (
            f"Refusing to edit notes.txt: a symbolic link leads it to {outside}, outside the "
            "working directory. Use that path itself if you mean to change it."
        )
        assert outside.read_text() == "secret = 1\n"
        named = await Runner(project)(EditTool(), path=str(outside), edits=[edit("1", "2")])
        assert not named.is_error
        assert outside.read_text() == "secret = 2\n"
    finally:
        outside.unlink()


async def test_a_link_inside_the_project_is_followed(call: Runner, tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("a = 1\n")
    (tmp_path / "alias.txt").symlink_to("real.txt")
    out = await call(EditTool(), path="alias.txt", edits=[edit("1", "2")])
    assert not out.is_error
    assert (tmp_path / "real.txt").read_text() == "a = 2\n"
    assert (tmp_path / "alias.txt").is_symlink()


async def test_a_file_over_the_size_limit_is_refused_unread(call: Runner, tmp_path: Path) -> None:
    big = tmp_path / "big.txt"
    with big.open("wb") as f:
        f.write(b"needle\n")
        f.truncate(2 << 30)
    out = await call(EditTool(), path="big.txt", edits=[edit("needle", "pin")])
    assert out.is_error
    assert out.text == (
        "Could not edit file: big.txt. It is 2048.0MB; edit loads files up to 32.0MB, so change "
        "it with bash instead."
    )
    assert MAX_EDIT_BYTES == 32 << 20
    with big.open("rb") as f:
        assert f.read(7) == b"needle\n"


async def test_many_repeated_lines_do_not_stall_the_diff(call: Runner, tmp_path: Path) -> None:
    # difflib's exact matcher needed minutes for this; the result must come back at once.
    body = "}\n" * 20000
    (tmp_path / "f.js").write_text(f"first\n{body}last\n")
    out = await call(
        EditTool(), path="f.js", edits=[edit("first\n", "FIRST\n"), edit("last\n", "LAST\n")]
    )
    assert not out.is_error
    assert out.details["diff"].startswith("-    1 first\n+    1 FIRST\n     2 }\n")
    assert out.details["patch"].count("@@ -") == 2
