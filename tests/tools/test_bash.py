"""The bash tool: output, exit codes, truncation with a spill file, timeout, abort, cancel."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from pi_context.errors import ToolError
from pi_context.tools import BashTool, ToolOutcome, run_tool
from pi_context.tools.bash import DEFAULT_TIMEOUT_SECONDS, format_seconds

from .conftest import Runner


def _alive(pid: int) -> bool:
    """Whether ``pid`` still runs (waits a little for a just-killed process to go)."""
    for _ in range(300):
        if not _running(pid):
            return False
        time.sleep(0.01)
    return True


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); treat it as dead.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


async def _wait_for_file(path: Path) -> str:
    for _ in range(500):
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        await asyncio.sleep(0.01)
    raise AssertionError(f"{path} never appeared")


async def test_merged_output_and_exit_code(call: Runner) -> None:
    out = await call(BashTool(), command="echo out; echo err >&2; exit 3")
    assert out.is_error
    assert out.text == "out\nerr\n\n\nCommand exited with code 3"
    assert out.details is None


async def test_success_and_no_output(call: Runner, tmp_path: Path) -> None:
    out = await call(BashTool(), command="pwd")
    assert out.text == f"{tmp_path}\n"
    assert not out.is_error
    assert out.details is None
    assert (await call(BashTool(), command="true")).text == "(no output)"


async def test_abortdeath_is_128_plus_signo(call: Runner) -> None:
    out = await call(BashTool(), command="kill -9 $$")
    assert out.text.endswith("Command exited with code 137")


async def test_tail_truncation_saves_full_output(call: Runner) -> None:
    out = await call(BashTool(), command="seq 1 3000")
    assert not out.is_error
    trunc = out.details["truncation"]
    full = Path(out.details["fullOutputPath"])
    try:
        assert out.text.startswith("1001\n")
        assert out.text.endswith(f"3000\n\n[Showing lines 1001-3000 of 3000. Full output: {full}]")
        assert trunc["truncatedBy"] == "lines"
        assert trunc["totalLines"] == 3000
        assert full.read_text() == "".join(f"{i}\n" for i in range(1, 3001))
        assert full.stat().st_mode & 0o777 == 0o600
    finally:
        full.unlink()


async def test_partial_last_line(call: Runner) -> None:
    out = await call(BashTool(), command="head -c 60000 /dev/zero | tr '\\0' x")
    full = Path(out.details["fullOutputPath"])
    full.unlink()
    assert out.text.endswith(
        f"[Showing last 50.0KB of line 1 (line is 58.6KB). Full output: {full}]"
    )
    assert out.details["truncation"]["lastLinePartial"] is True


async def test_large_output_beyond_memory_window(call: Runner) -> None:
    # 1 MB of output: only a bounded tail is kept in memory; totals still cover everything.
    out = await call(BashTool(), command="yes abcdefghi | head -n 100000")
    full = Path(out.details["fullOutputPath"])
    try:
        assert full.stat().st_size == 1_000_000
        assert out.details["truncation"]["totalLines"] == 100000
        assert out.text.endswith(f"[Showing lines 98001-100000 of 100000. Full output: {full}]")
    finally:
        full.unlink()


async def test_timeout_kills_and_reports(call: Runner) -> None:
    out = await call(BashTool(), command="echo started; sleep 30", timeout=0.5)
    assert out.is_error
    assert out.details == {}
    assert out.text == "started\n\n\nCommand timed out after 0.5 seconds"


@pytest.mark.parametrize(
    ("timeout", "message"),
    [
        (0, "Invalid timeout: must be a finite number of seconds"),
        (-1, "Invalid timeout: must be a finite number of seconds"),
        (3e6, "Invalid timeout: maximum is 2147483.647 seconds"),
    ],
)
async def test_invalid_timeout(call: Runner, timeout: float, message: str) -> None:
    out = await call(BashTool(), command="true", timeout=timeout)
    assert out.is_error
    assert out.text == message


async def test_abort_abortkills_process_group(tmp_path: Path) -> None:
    abort = asyncio.Event()
    task = asyncio.create_task(
        run_tool(
            BashTool(),
            "c",
            {"command": "sleep 30 & echo $! > child.pid; echo go; wait"},
            cwd=tmp_path,
            signal=abort,
        )
    )
    child = int(await _wait_for_file(tmp_path / "child.pid"))
    abort.set()
    out = await task
    assert out.is_error
    assert out.text == "go\n\n\nCommand aborted"
    assert not _alive(child)


async def test_task_cancellation_kills_process_group(tmp_path: Path) -> None:
    task = asyncio.create_task(
        run_tool(BashTool(), "c", {"command": "sleep 30 & echo $! > child.pid; wait"}, cwd=tmp_path)
    )
    child = int(await _wait_for_file(tmp_path / "child.pid"))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not _alive(child)


async def test_environment_and_settings(tmp_path: Path) -> None:
    os.environ["PI_MODEL"] = "inherited"
    try:
        tool = BashTool(
            command_prefix="export GREETING=hi",
            agent_dir=tmp_path / "agent",
            session_env=lambda: {"PI_SESSION_ID": "sess-1"},
        )
        out = await run_tool(
            tool,
            "c",
            {"command": 'echo "$GREETING ${PI_MODEL:-unset} $PI_SESSION_ID ${PATH%%:*}"'},
            cwd=tmp_path,
        )
    finally:
        del os.environ["PI_MODEL"]
    assert out.text == f"hi unset sess-1 {tmp_path / 'agent' / 'bin'}\n"


def test_a_shell_path_may_start_with_a_tilde(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pi_context.tools.bash import default_shell

    (tmp_path / "sh").symlink_to("/bin/sh")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert default_shell("~/sh") == str(tmp_path / "sh")
    assert default_shell(f"file://{tmp_path}/sh") == str(tmp_path / "sh")
    with pytest.raises(ToolError, match=f"Custom shell path not found: {tmp_path}/nope"):
        default_shell("~/nope")


def test_agent_bin_goes_on_path_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = str(tmp_path / "agent" / "bin")
    monkeypatch.setenv("PATH", f"/usr/bin{os.pathsep}{bin_dir}")
    tool = BashTool(agent_dir=tmp_path / "agent")
    assert tool.environment()["PATH"] == f"/usr/bin{os.pathsep}{bin_dir}"
    monkeypatch.setenv("PATH", "/usr/bin")
    assert tool.environment()["PATH"] == f"{bin_dir}{os.pathsep}/usr/bin"


async def test_missing_cwd_and_shell(tmp_path: Path) -> None:
    out = await run_tool(BashTool(), "c", {"command": "true"}, cwd=tmp_path / "gone")
    assert (
        out.text
        == f"Working directory does not exist: {tmp_path / 'gone'}\nCannot execute bash commands."
    )
    out = await run_tool(
        BashTool(shell_path="/no/such/shell"), "c", {"command": "true"}, cwd=tmp_path
    )
    assert out.text == "Custom shell path not found: /no/such/shell"


async def test_live_updates(tmp_path: Path) -> None:
    updates: list[ToolOutcome] = []
    out = await run_tool(
        BashTool(), "c", {"command": "echo one"}, cwd=tmp_path, on_update=updates.append
    )
    assert out.text == "one\n"
    assert updates[0] == ToolOutcome([])
    assert all(not u.is_error for u in updates)
    assert updates[-1].text == "one\n"  # the last update shows everything printed


async def test_updates_arrive_while_the_command_runs(tmp_path: Path) -> None:
    """Output printed before the command blocks is an update before the command ends (the
    command waits for a file the test creates only after seeing that update)."""
    updates: list[ToolOutcome] = []
    gate = tmp_path / "gate"
    command = "echo first; while [ ! -f gate ]; do sleep 0.02; done; echo second"
    call = asyncio.ensure_future(
        run_tool(BashTool(), "c", {"command": command}, cwd=tmp_path, on_update=updates.append)
    )
    while not any(u.text == "first\n" for u in updates):
        assert not call.done(), "the command ended before any update showed its output"
        await asyncio.sleep(0.01)
    gate.touch()
    out = await call
    assert out.text == "first\nsecond\n"
    assert updates[-1].text == "first\nsecond\n"
    assert updates[-1].details == {}


async def test_structured_content_as_pi_hands_it_to_programs(call: Runner) -> None:
    out = await call(BashTool(), command="echo hi; exit 3")
    assert out.is_error
    structured = out.structured_content
    assert list(structured) == ["output", "truncated", "exit_code", "wall_time_seconds"]
    assert (structured["output"], structured["truncated"], structured["exit_code"]) == (
        "hi\n",
        False,
        3,
    )
    assert isinstance(structured["wall_time_seconds"], float)


async def test_structured_output_keeps_head_and_tail_of_a_huge_output(call: Runner) -> None:
    out = await call(BashTool(), command="seq 1 300000")  # about 2 MB
    full = Path(out.details["fullOutputPath"])
    try:
        structured = out.structured_content
        assert structured["truncated"] is True
        assert structured["full_output_path"] == str(full)
        text = structured["output"]
        assert text.startswith("1\n2\n")
        assert text.endswith("299999\n300000\n")
        omitted = full.stat().st_size - 1024 * 1024
        assert f"\n\n[... {omitted} bytes omitted ...]\n\n" in text
    finally:
        full.unlink()


def test_format_seconds() -> None:
    assert format_seconds(5.0) == "5"
    assert format_seconds(1.5) == "1.5"


async def test_timeout_after_shell_exit_names_background_processes(call: Runner) -> None:
    out = await call(BashTool(), command="(sleep 30; echo late) & echo bg", timeout=0.5)
    assert out.is_error
    assert out.text.startswith(
        "bg\n\n\nCommand timed out after 0.5 seconds. The shell exited with code 0 after "
    )
    assert out.text.endswith(
        " seconds, but background processes it started kept writing output until the timeout."
    )


async def test_line_limit_hit_by_an_unterminated_last_line_still_saves_output(call: Runner) -> None:
    out = await call(BashTool(), command="seq 1 2000; printf tail")
    full = Path(out.details["fullOutputPath"])
    try:
        assert out.text.endswith(
            f"2000\ntail\n\n[Showing lines 2-2001 of 2001. Full output: {full}]"
        )
        assert full.read_text().endswith("2000\ntail")
    finally:
        full.unlink()


# --- hostile commands: lingering children, escaped sessions, endless output, no timeout ---


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


async def test_a_background_child_holding_the_pipe_does_not_hold_the_call(
    call: Runner, tmp_path: Path
) -> None:
    out = await call(BashTool(), command="sleep 100 & echo $! > child.pid; echo started")
    child = int((tmp_path / "child.pid").read_text())
    try:
        assert not out.is_error
        assert out.text == (
            "started\n\n\n[The shell exited, but processes it started in the background still "
            "hold its output; what they write from now on is not captured.]"
        )
        assert _running(child)  # left running, as a terminal would
    finally:
        _kill(child)


async def test_background_output_written_before_the_pipe_closes_is_kept(call: Runner) -> None:
    out = await call(BashTool(drain_seconds=60), command="(sleep 0.2; echo late) & echo early")
    assert out.text == "early\nlate\n"


@pytest.mark.parametrize("how", ["timeout", "abort"])
async def test_a_setsid_child_is_killed_on_timeout_and_abort(tmp_path: Path, how: str) -> None:
    abort = asyncio.Event()
    arguments: dict[str, Any] = {
        "command": "setsid sleep 100 & echo $! > child.pid; echo go; sleep 100"
    }
    if how == "timeout":
        arguments["timeout"] = 1
    task = asyncio.create_task(run_tool(BashTool(), "c", arguments, cwd=tmp_path, signal=abort))
    child = int(await _wait_for_file(tmp_path / "child.pid"))
    try:
        while os.getsid(child) != child:  # wait until it has left the command's session
            await asyncio.sleep(0.01)
        if how == "abort":
            abort.set()
        out = await task
        assert out.is_error
        expected = "Command timed out after 1 seconds" if how == "timeout" else "Command aborted"
        assert out.text == f"go\n\n\n{expected}"
        assert not _alive(child)
    finally:
        _kill(child)


def test_no_event_loop_noise_at_exit_after_an_escaped_child(tmp_path: Path) -> None:
    script = (
        "import asyncio, pathlib\n"
        "from pi_context.tools import BashTool, run_tool\n"
        "out = asyncio.run(run_tool(BashTool(), 'c', {'command': "
        "'setsid sleep 100 & echo $! > child.pid; sleep 100', 'timeout': 0.5}, "
        f"cwd=pathlib.Path({str(tmp_path)!r})))\n"
        "print(out.text)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60
    )
    child = int((tmp_path / "child.pid").read_text())
    _kill(child)
    assert done.stdout == "Command timed out after 0.5 seconds\n"
    assert done.stderr == ""


async def test_the_spill_file_is_capped_and_the_note_says_so(call: Runner) -> None:
    out = await call(BashTool(max_spill_bytes=100_000), command="seq 1 100000")
    full = Path(out.details["fullOutputPath"])
    try:
        assert full.stat().st_size == 100_000
        assert full.read_bytes().startswith(b"1\n2\n3\n")
        assert out.text.endswith(
            f"[Showing lines 98001-100000 of 100000. First 97.7KB of output saved to: {full}]"
        )
        assert out.details["truncation"]["totalBytes"] == len(
            "".join(f"{i}\n" for i in range(1, 100001))
        )
    finally:
        full.unlink()


async def test_endless_output_until_a_timeout_stays_within_the_cap(call: Runner) -> None:
    out = await call(BashTool(max_spill_bytes=1 << 20), command="cat /dev/zero", timeout=1)
    spills = [word.rstrip("]") for word in out.text.split() if "pi-bash-" in word]
    full = Path(spills[-1])
    try:
        assert full.stat().st_size == 1 << 20
        assert out.is_error
        assert out.text.endswith(
            f"First 1.0MB of output saved to: {full}]\n\nCommand timed out after 1 seconds"
        )
    finally:
        full.unlink()


async def test_a_command_without_timeout_gets_the_default(call: Runner) -> None:
    assert BashTool().default_timeout == DEFAULT_TIMEOUT_SECONDS == 120
    described = BashTool().parameters["properties"]["timeout"]["description"]
    assert described == "Seconds before the command is killed (optional; default 120)"
    out = await call(BashTool(default_timeout=0.5), command="echo started; sleep 100")
    assert out.is_error
    assert out.text == (
        "started\n\n\nCommand timed out after 0.5 seconds (the default; set timeout to allow "
        "longer)"
    )


async def test_no_default_timeout_keeps_pis_schema(call: Runner) -> None:
    tool = BashTool(default_timeout=None)
    described = tool.parameters["properties"]["timeout"]["description"]
    assert described == "Seconds before the command is killed (optional)"
    assert (await call(tool, command="echo ok")).text == "ok\n"


async def test_an_update_of_a_long_output_is_its_shown_tail_without_the_note(
    tmp_path: Path,
) -> None:
    """As pi sends it: the lines the model would see so far, and the truncation in details."""
    updates: list[ToolOutcome] = []
    out = await run_tool(
        BashTool(), "c", {"command": "seq 1 3000"}, cwd=tmp_path, on_update=updates.append
    )
    full = Path(out.details["fullOutputPath"])
    try:
        last = updates[-1]
        assert last.text == "\n".join(str(i) for i in range(1001, 3001))
        assert last.details["truncation"]["totalLines"] == 3000
        assert last.details["fullOutputPath"] == str(full)
        assert out.text.endswith(f"[Showing lines 1001-3000 of 3000. Full output: {full}]")
    finally:
        full.unlink()
