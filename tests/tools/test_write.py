"""The write tool."""

from __future__ import annotations

import asyncio
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
