"""Keys typed while a run is busy, driven in-process through a prompt_toolkit pipe input.

The scripted model types into the pipe from inside its own request, so the keys arrive while
the run is in progress, with no sleeps or timing assumptions in the test.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, cast

from prompt_toolkit.input import PipeInput
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from pi_context.cli.app.agent_api import NO_MODEL_HELP
from pi_context.cli.app.app import AppConfig, RunningAgent
from pi_context.cli.interactive.mode import InteractiveShell
from pi_context.messages import ImageContent
from pi_context.model import ModelRequest
from pi_context.testing import ScriptedModel, ScriptedReply, reply


def _typing(
    pipe: PipeInput, keys: str, then: ScriptedReply
) -> Callable[[ModelRequest], ScriptedReply]:
    def answer(_request: ModelRequest) -> ScriptedReply:
        pipe.send_text(keys)
        return then

    return answer


async def _shell(
    tmp_path: Path, pipe: PipeInput, model: ScriptedModel | None
) -> tuple[InteractiveShell, io.StringIO]:
    (tmp_path / "agent").mkdir(exist_ok=True)
    config = AppConfig(cwd=str(tmp_path), agent_dir=tmp_path / "agent", session_dir=None)
    agent = RunningAgent(await config.create(model), config)
    screen = io.StringIO()
    console = Console(file=screen, width=100, force_terminal=False, color_system=None)
    shell = InteractiveShell(agent, console=console, pt_input=pipe, pt_output=DummyOutput())
    return shell, screen


def _type_after(shell: InteractiveShell, pipe: PipeInput, prompt: str, keys: str) -> None:
    """Type ``keys`` once the run of ``prompt`` has ended (between two prompts)."""
    original = shell.send

    async def send_then_type(text: str, images: Sequence[ImageContent] = ()) -> None:
        await original(text, images)
        if text == prompt:
            pipe.send_text(keys)

    shell.send = send_then_type  # type: ignore[method-assign]


async def _run(shell: InteractiveShell) -> int:
    # a generous bound that only matters when a key went missing (the shell would wait forever)
    return await asyncio.wait_for(shell.run(), 60)


def _users(shell: InteractiveShell) -> list[str]:
    out = []
    for entry in shell.agent.session.entries:
        message = entry.message
        if entry.type == "message" and message is not None and message.get("role") == "user":
            content: list[dict[str, str]] = cast(Any, message)["content"]
            out.append("".join(b.get("text", "") for b in content))
    return out


async def test_a_line_typed_and_sent_during_a_run_is_sent_after_it(
    tmp_path: Path, pipe: PipeInput
) -> None:
    model = ScriptedModel(
        [
            _typing(pipe, "queued line\r", reply("First answer.", delay=0.05)),
            _typing(pipe, "/quit\r", reply("Second answer.")),
        ]
    )
    shell, screen = await _shell(tmp_path, pipe, model)
    pipe.send_text("first\r")
    assert await _run(shell) == 0
    assert _users(shell) == ["first", "queued line"]
    assert "Second answer." in screen.getvalue()
    model.assert_complete()


async def test_text_typed_during_a_run_waits_in_the_next_prompt(
    tmp_path: Path, pipe: PipeInput
) -> None:
    # "draft" is typed during the run; " done" and Enter complete the line afterwards
    model = ScriptedModel(
        [
            _typing(pipe, "draft", reply("First answer.", delay=0.05)),
            _typing(pipe, "/quit\r", reply("Second answer.")),
        ]
    )
    shell, _ = await _shell(tmp_path, pipe, model)
    pipe.send_text("first\r")
    _type_after(shell, pipe, "first", " done\r")
    assert await _run(shell) == 0
    assert _users(shell) == ["first", "draft done"]


async def test_escape_aborts_the_run_and_typed_text_survives(
    tmp_path: Path, pipe: PipeInput
) -> None:
    model = ScriptedModel(
        [
            _typing(pipe, "kept\x1b", reply("never shown", delay=600)),
            _typing(pipe, "/quit\r", reply("After abort.")),
        ]
    )
    shell, screen = await _shell(tmp_path, pipe, model)
    pipe.send_text("slow\r")
    _type_after(shell, pipe, "slow", "\r")
    assert await _run(shell) == 0
    assert "Aborting" in screen.getvalue()
    assert "never shown" not in screen.getvalue()
    assert _users(shell) == ["slow", "kept"]


async def test_escape_right_behind_enter_aborts_the_run_it_started(
    tmp_path: Path, pipe: PipeInput
) -> None:
    # Enter and Esc arrive in one read: the prompt's parser still holds the Esc when it returns
    model = ScriptedModel([_typing(pipe, "/quit\r", reply("Answer to next."))])
    shell, screen = await _shell(tmp_path, pipe, model)
    pipe.send_text("slow\r\x1b")
    _type_after(shell, pipe, "slow", "next\r")
    assert await _run(shell) == 0
    assert "Aborting" in screen.getvalue()
    # the aborted run never reached the model: its only request is the one for "next"
    assert len(model.requests) == 1
    assert _users(shell) == ["next"]  # cancelled before it started, "slow" was never stored
    assert "Answer to next." in screen.getvalue()


async def test_without_a_model_a_prompt_says_how_to_get_one(
    tmp_path: Path, pipe: PipeInput
) -> None:
    shell, screen = await _shell(tmp_path, pipe, None)
    pipe.send_text("hello\r/quit\r")
    assert await _run(shell) == 0
    shown = " ".join(screen.getvalue().split())
    assert NO_MODEL_HELP in shown
    assert _users(shell) == []


def _last_user_text(request: ModelRequest) -> str:
    users = [m for m in request.messages if m["role"] == "user"]
    content: Any = users[-1]["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


async def test_enter_during_a_run_queues_the_line_as_steering(
    tmp_path: Path, pipe: PipeInput
) -> None:
    model = ScriptedModel(
        [
            _typing(pipe, "use python\r", reply("First answer.", delay=0.05)),
            _typing(pipe, "/quit\r", reply("Steered answer.")),
        ]
    )
    shell, screen = await _shell(tmp_path, pipe, model)
    pipe.send_text("first\r")
    assert await _run(shell) == 0
    # delivered to the same run: the answer that would have ended it gets another request
    assert _users(shell) == ["first", "use python"]
    assert _last_user_text(model.requests[1]) == "use python"
    shown = screen.getvalue()
    assert "Steering: use python" in shown
    assert "Alt+Up to edit all queued messages" in shown
    model.assert_complete()


async def test_alt_enter_queues_a_follow_up_for_when_the_agent_would_stop(
    tmp_path: Path, pipe: PipeInput
) -> None:
    model = ScriptedModel(
        [
            _typing(
                pipe,
                "then this\x1b\r",
                reply(tool_calls=[("bash", {"command": "true"})], delay=0.05),
            ),
            reply("Tool seen."),
            _typing(pipe, "/quit\r", reply("Follow-up answer.")),
        ]
    )
    shell, screen = await _shell(tmp_path, pipe, model)
    pipe.send_text("first\r")
    assert await _run(shell) == 0
    assert _users(shell) == ["first", "then this"]
    # the tool result went back first; the follow-up only once the agent would have stopped
    assert model.requests[1].messages[-1]["role"] == "toolResult"
    assert _last_user_text(model.requests[2]) == "then this"
    assert "Follow-up: then this" in screen.getvalue()


async def test_alt_up_takes_the_queued_messages_back_into_the_next_prompt(
    tmp_path: Path, pipe: PipeInput
) -> None:
    model = ScriptedModel(
        [
            _typing(pipe, "one\rtwo\x1b\rdraft\x1b[1;3A", reply("Only answer.", delay=0.05)),
            _typing(pipe, "/quit\r", reply("Second answer.")),
        ]
    )
    shell, screen = await _shell(tmp_path, pipe, model)
    pipe.send_text("first\r")
    _type_after(shell, pipe, "first", "\r")  # send what the next prompt was given
    assert await _run(shell) == 0
    assert "Restored 2 queued message(s) to editor" in screen.getvalue()
    assert _users(shell) == ["first", "one\n\ntwo\n\ndraft"]
    assert len(model.requests) == 2  # nothing was delivered to the first run


async def test_an_extension_command_typed_during_a_run_runs_at_once(
    tmp_path: Path, pipe: PipeInput
) -> None:
    folder = tmp_path / "agent" / "extensions"
    folder.mkdir(parents=True)
    (folder / "marker.py").write_text(
        "def register(pi):\n"
        "    def mark(args, ctx):\n"
        "        pi.append_entry('marked', {'args': args, 'busy': ctx.session.busy})\n"
        "    pi.register_command('mark', mark)\n"
    )
    model = ScriptedModel(
        [
            _typing(pipe, "/mark now\r", reply("First answer.", delay=0.05)),
            _typing(pipe, "/quit\r", reply("Second answer.")),
        ]
    )
    shell, _ = await _shell(tmp_path, pipe, model)
    pipe.send_text("first\r")
    _type_after(shell, pipe, "first", "second\r")
    assert await _run(shell) == 0
    marks = [e.data["data"] for e in shell.agent.session.entries if e.type == "custom"]
    assert marks == [{"args": "now", "busy": True}]  # ran while the answer was still running
    assert _users(shell) == ["first", "second"]
