"""The write tool."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from pi_context.tools import WriteTool, run_tool
from pi_context.tools.base import PathLocks

from .conftest import Runner


async def test_creates_parents_and_writes_exactly(call: Runner, tmp_path: Path) -> None:
    out = await call(WriteTool(), path="deep/er/x.txt", content="no newline")
    assert out.text == "Successfully wrote to deep/er/x.txt"
    assert out.details is None
    assert not out.is_error
    assert (tmp_path / "deep/er/x.txt").read_bytes() == b"no newline"


async def test_overwrites(call: Runner, tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_text("old content that is longer")
    await call(WriteTool(), path="x.txt", content="new")
    assert (tmp_path / "x.txt").read_text() == "new"


async def test_missing_content_is_an_error_not_an_exception(call: Runner) -> None:
    out = await call(WriteTool(), path="x.txt")
    assert out.is_error
    assert "must have required property 'content'" in out.text


async def test_parallel_writes_to_one_path_are_serialized(tmp_path: Path) -> None:
    tool = WriteTool(locks=PathLocks())
    results = await asyncio.gather(
        *(
            run_tool(tool, f"c{i}", {"path": "same.txt", "content": str(i) * 1000}, cwd=tmp_path)
            for i in range(5)
        )
    )
    assert all(not r.is_error for r in results)
    text = (tmp_path / "same.txt").read_text()
    assert len(set(text)) == 1
    assert len(text) == 1000


async def test_aborted_before_writing(tmp_path: Path) -> None:
    signal = asyncio.Event()
    signal.set()
    out = await run_tool(
        WriteTool(), "c", {"path": "x", "content": "y"}, cwd=tmp_path, signal=signal
    )
    assert out.is_error
    assert out.text == "Operation aborted"
    assert not (tmp_path / "x").exists()


async def test_lone_surrogates_are_written_as_replacement_characters(
    call: Runner, tmp_path: Path
) -> None:
    await call(WriteTool(), path="s.txt", content="a\ud800b")
    assert (tmp_path / "s.txt").read_text() == "a\ufffdb"


# --- hostile targets: pipes, devices, directories, links out of the project ------------------


async def test_a_fifo_is_refused_without_waiting_for_a_reader(call: Runner, tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    out = await call(WriteTool(), path="pipe", content="x")
    assert out.is_error
    assert out.text == "Cannot write pipe: it is a named pipe (FIFO), not a regular file."


async def test_a_device_is_refused(call: Runner) -> None:
    out = await call(WriteTool(), path="/dev/null", content="x")
    assert out.is_error
    assert out.text == "Cannot write /dev/null: it is a character device, not a regular file."


async def test_a_directory_is_refused(call: Runner, tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    out = await call(WriteTool(), path="d", content="x")
    assert out.is_error
    assert out.text == f"EISDIR: illegal operation on a directory, open '{tmp_path / 'd'}'"


async def test_a_file_where_a_parent_directory_should_be(call: Runner, tmp_path: Path) -> None:
    (tmp_path / "f").write_text("keep")
    out = await call(WriteTool(), path="f/sub/x.txt", content="x")
    assert out.is_error
    assert out.text == f"ENOTDIR: not a directory, mkdir '{tmp_path / 'f'}'"
    assert (tmp_path / "f").read_text() == "keep"


async def test_a_link_out_of_the_project_is_refused(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    target = tmp_path / "dotfile"
    target.write_text("original")
    (project / "notes.txt").symlink_to(target)
    (project / "dangling").symlink_to(tmp_path / "new-file")
    (project / "linked-dir").symlink_to(tmp_path)
    call = Runner(project)
    for name in ("notes.txt", "dangling", "linked-dir/dotfile"):
        out = await call(WriteTool(), path=name, content="planted")
        assert out.is_error
        assert out.text.startswith(f"Refusing to write {name}: a symbolic link leads it to ")
        assert "outside the working directory" in out.text
    assert target.read_text() == "original"
    assert not (tmp_path / "new-file").exists()
    named = await call(WriteTool(), path=str(target), content="chosen")  # by its own name: fine
    assert not named.is_error
    assert target.read_text() == "chosen"


async def test_a_link_inside_the_project_is_followed(call: Runner, tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("old")
    (tmp_path / "alias.txt").symlink_to("real.txt")
    out = await call(WriteTool(), path="alias.txt", content="new")
    assert not out.is_error
    assert (tmp_path / "real.txt").read_text() == "new"
    assert (tmp_path / "alias.txt").is_symlink()


async def test_a_nul_in_the_path_is_a_clear_error(call: Runner) -> None:
    out = await call(WriteTool(), path="a\x00b", content="x")
    assert out.is_error
    assert out.text == "Cannot write 'a\\x00b': the path contains a NUL character."


async def test_a_large_content_is_written_whole(call: Runner, tmp_path: Path) -> None:
    content = "0123456789abcdef" * (4 << 20)  # 64 MiB
    out = await call(WriteTool(), path="big.txt", content=content)
    assert not out.is_error
    assert (tmp_path / "big.txt").stat().st_size == len(content)
