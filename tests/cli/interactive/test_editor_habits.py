"""The editor habits' parts without a terminal: the external editor, the answer ``/copy``
takes and how it is copied, the display toggles in the renderer, and remapped keys read
while an answer runs (a prompt_toolkit pipe; the real terminal is in
``test_editor_habits_tmux``)."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import signal
from pathlib import Path
from typing import Any

from prompt_toolkit.input import PipeInput
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from pi_context.cli.app.app import AppConfig, RunningAgent
from pi_context.cli.interactive.editor_habits import (
    MAX_OSC52_CHARS,
    DisplayState,
    copy_last_answer,
    edit_externally,
    external_editor_command,
    last_answer_text,
    osc52,
)
from pi_context.cli.interactive.keymap import load_keymap
from pi_context.cli.interactive.mode import InteractiveShell
from pi_context.cli.interactive.render import EventRenderer
from pi_context.events import MessageEnd, ToolExecutionEnd
from pi_context.model import ModelRequest
from pi_context.testing import ScriptedModel, ScriptedReply, reply

# -- the external editor --------------------------------------------------------------------


def test_the_editor_command_follows_pi_order() -> None:
    env = {"VISUAL": "vis", "EDITOR": "ed"}
    assert external_editor_command({"externalEditor": "code --wait"}, env) == "code --wait"
    assert external_editor_command({"externalEditor": "  "}, env) == "vis"
    assert external_editor_command({}, {"EDITOR": "ed"}) == "ed"
    assert external_editor_command({}, {"VISUAL": "", "EDITOR": "ed"}) == "ed"
    assert external_editor_command({}, {}) == "nano"


def _editor(tmp_path: Path, body: str) -> str:
    script = tmp_path / "editor.sh"
    script.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    script.chmod(0o755)
    return str(script)


def test_the_edited_text_comes_back(tmp_path: Path) -> None:
    seen = tmp_path / "seen.txt"
    # the arguments of the command come before the file; a BOM and one newline are dropped
    command = _editor(
        tmp_path, f'cp "$2" {seen}; printf \'\\357\\273\\277%s new\\n\\n\' "$1" > "$2"'
    )
    said: list[str] = []
    text, problem = edit_externally(f"{command} ARG", "old text", say=said.append)
    assert (text, problem) == ("ARG new\n", None)
    assert seen.read_text(encoding="utf-8") == "old text"
    assert len(said) == 1
    assert command in said[0]


def test_an_editor_that_fails_leaves_the_input(tmp_path: Path) -> None:
    failing = _editor(tmp_path, "exit 3")
    assert edit_externally(failing, "x", say=lambda _: None) == (
        None,
        "External editor exited with code 3; input unchanged",
    )
    missing = str(tmp_path / "no-such-editor")
    assert edit_externally(missing, "x", say=lambda _: None) == (
        None,
        f"Failed to launch external editor: {missing}",
    )


def test_ctrl_c_in_the_editor_reaches_the_editor_not_pictx(tmp_path: Path) -> None:
    # Ctrl-C in a terminal editor signals the whole foreground job: pictx must not take it
    # as its own Ctrl-C (which would clear the input the notice says is unchanged)
    seen: list[int] = []
    before = signal.signal(signal.SIGINT, lambda number, _frame: seen.append(number))
    try:
        editor = _editor(tmp_path, "kill -INT $PPID; kill -INT $$; sleep 5")
        assert edit_externally(editor, "x", say=lambda _: None) == (
            None,
            "External editor exited with signal SIGINT; input unchanged",
        )
        assert seen == []
        signal.raise_signal(signal.SIGINT)  # pictx's own handler is back afterwards
        assert seen == [signal.SIGINT]
    finally:
        signal.signal(signal.SIGINT, before)


def test_the_temporary_file_is_removed(tmp_path: Path) -> None:
    where = tmp_path / "where.txt"
    command = _editor(tmp_path, f'printf "%s" "$1" > {where}')
    edit_externally(command, "x", say=lambda _: None)
    edited = Path(where.read_text(encoding="utf-8"))
    assert edited.name == "prompt.md"
    assert not edited.parent.exists()


# -- /copy ------------------------------------------------------------------------------------


def _assistant(text: str | None, stop: str = "stop", **extra: Any) -> dict[str, Any]:
    content = [{"type": "text", "text": text}] if text is not None else []
    return {"role": "assistant", "content": content, "stopReason": stop, **extra}


def test_the_last_answer_is_picked_as_pi_picks_it() -> None:
    user = {"role": "user", "content": [{"type": "text", "text": "q"}]}
    assert last_answer_text([]) is None
    assert last_answer_text([user]) is None
    assert last_answer_text([_assistant("one"), user, _assistant(" two \n")]) == "two"
    # a turn that only called tools, or was aborted without text, is passed over
    assert last_answer_text([_assistant("one"), _assistant(None, "toolUse")]) == "one"
    assert last_answer_text([_assistant("one"), _assistant("partial", "aborted")]) == "partial"
    # an answer that ended normally stays the last one, even without text
    assert last_answer_text([_assistant("one"), _assistant(None)]) is None


def _no_tools(tmp_path: Path) -> dict[str, str]:
    return {"PATH": str(tmp_path)}  # no clipboard command on it


def test_copy_through_a_clipboard_command(tmp_path: Path) -> None:
    copied = tmp_path / "copied"
    (tmp_path / "xclip").write_text(f"#!/bin/sh\n/bin/cat > {copied}\n", encoding="utf-8")
    (tmp_path / "xclip").chmod(0o755)
    written: list[str] = []
    env = {"PATH": str(tmp_path), "DISPLAY": ":0"}
    assert copy_last_answer("answer", written.append, env=env, platform="linux") == (
        True,
        "Copied last agent message to clipboard",
    )
    assert copied.read_text(encoding="utf-8") == "answer"
    assert written == []  # a local display: no OSC 52


def test_osc52_where_pi_writes_it(tmp_path: Path) -> None:
    written: list[str] = []
    env = _no_tools(tmp_path)
    # Linux without a display: the terminal is the only way
    assert copy_last_answer("héllo", written.append, env=env, platform="linux")[0]
    assert written == [f"\x1b]52;c;{base64.b64encode('héllo'.encode()).decode()}\x07"]
    # a remote session writes it even when a tool copied
    written.clear()
    env_remote = {**env, "DISPLAY": ":0", "SSH_CONNECTION": "1 2 3 4"}
    assert copy_last_answer("x", written.append, env=env_remote, platform="linux")[0]
    assert len(written) == 1


def test_a_clear_notice_when_nothing_copies(tmp_path: Path) -> None:
    env = _no_tools(tmp_path)
    x11 = {**env, "DISPLAY": ":0"}
    assert copy_last_answer("x", None, env=x11, platform="linux") == (
        False,
        "Clipboard unavailable: install `xclip` or `xsel`, or check X11 access",
    )
    assert not copy_last_answer("x", None, env=env, platform="linux")[0]  # no terminal
    big = "x" * MAX_OSC52_CHARS
    assert osc52(big) is None
    assert copy_last_answer(big, print, env=env, platform="linux") == (
        False,
        "Clipboard unavailable: text exceeds the OSC 52 size limit",
    )
    assert copy_last_answer(None, print, env=env) == (False, "No agent messages to copy yet.")


# -- the display toggles in the renderer ----------------------------------------------------


def _console() -> tuple[Console, io.StringIO]:
    screen = io.StringIO()
    return Console(file=screen, width=100, color_system=None), screen


def _tool_end(lines: int) -> ToolExecutionEnd:
    text = "\n".join(f"line {n}" for n in range(1, lines + 1))
    result: Any = {"role": "toolResult", "content": [{"type": "text", "text": text}]}
    return ToolExecutionEnd("t1", "bash", result, False)


def test_collapsed_output_is_kept_for_expanding() -> None:
    console, screen = _console()
    display = DisplayState(expand_key="Ctrl+Y")
    EventRenderer(console, display=display).handle(_tool_end(20))
    assert "12 more lines (collapsed) · Ctrl+Y to expand" in screen.getvalue()
    assert "line 20" not in screen.getvalue()
    (kept,) = display.collapsed
    assert kept.title == "bash"
    assert kept.text.endswith("line 20")
    display.tools_expanded = True
    EventRenderer(console, display=display).handle(_tool_end(20))
    assert "line 20" in screen.getvalue()
    assert len(display.collapsed) == 1  # nothing more was collapsed


def test_hidden_thinking_is_a_label() -> None:
    message: Any = {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "deep thought"},
            {"type": "text", "text": "A"},
        ],
        "stopReason": "stop",
    }
    console, screen = _console()
    EventRenderer(console, display=DisplayState(hide_thinking=True)).handle(MessageEnd(message))
    assert "deep thought" not in screen.getvalue()
    assert "Thinking..." in screen.getvalue()
    console, screen = _console()
    EventRenderer(console, display=DisplayState()).handle(MessageEnd(message))
    assert "deep thought" in screen.getvalue()


# -- remapped keys while an answer runs -------------------------------------------------------


async def _shell(
    tmp_path: Path, pipe: PipeInput, model: ScriptedModel, bindings: dict[str, Any]
) -> tuple[InteractiveShell, io.StringIO]:
    agent_dir = tmp_path / "agent"
    agent_dir.mkdir(exist_ok=True)
    (agent_dir / "keybindings.json").write_text(json.dumps(bindings), encoding="utf-8")
    config = AppConfig(cwd=str(tmp_path), agent_dir=agent_dir, session_dir=None)
    agent = RunningAgent(await config.create(model), config)
    console, screen = _console()
    shell = InteractiveShell(
        agent,
        console=console,
        pt_input=pipe,
        pt_output=DummyOutput(),
        keymap=load_keymap(agent_dir),
    )
    return shell, screen


def _typing(pipe: PipeInput, keys: str, then: ScriptedReply) -> Any:
    def answer(_request: ModelRequest) -> ScriptedReply:
        pipe.send_text(keys)
        return then

    return answer


def _users(shell: InteractiveShell) -> list[str]:
    out = []
    for entry in shell.agent.session.entries:
        message: Any = entry.message
        if entry.type == "message" and message is not None and message.get("role") == "user":
            out.append("".join(b.get("text", "") for b in message["content"]))
    return out


async def test_a_remapped_interrupt_and_follow_up_apply_during_a_run(
    tmp_path: Path, pipe: PipeInput
) -> None:
    # Ctrl+G aborts instead of Esc; Ctrl+F queues a follow-up instead of Alt+Enter
    model = ScriptedModel(
        [
            _typing(pipe, "later\x06", reply("First.", delay=0.05)),
            _typing(pipe, "kept\x07", reply("never shown", delay=600)),
            _typing(pipe, "/quit\r", reply("Last.")),
        ]
    )
    shell, screen = await _shell(
        tmp_path,
        pipe,
        model,
        {"app.interrupt": "ctrl+g", "app.message.followUp": "ctrl+f", "app.editor.external": []},
    )
    pipe.send_text("first\r")
    original = shell.send

    async def send_then_enter(text: str, images: Any = ()) -> None:
        await original(text, images)
        if text == "first":
            pipe.send_text("\r")  # sends what the aborted run left in the input

    shell.send = send_then_enter  # type: ignore[method-assign]
    assert await asyncio.wait_for(shell.run(), 60) == 0
    shown = screen.getvalue()
    assert "Follow-up: later" in shown
    assert "Aborting" in shown
    assert "never shown" not in shown
    assert _users(shell) == ["first", "later", "kept"]
    model.assert_complete()


async def test_ctrl_o_and_ctrl_t_during_a_run_apply_at_once(
    tmp_path: Path, pipe: PipeInput
) -> None:
    bash = reply(tool_calls=[("bash", {"command": "seq 1 30"})])
    model = ScriptedModel(
        [
            _typing(pipe, "\x0f\x14", bash),  # Ctrl+O, Ctrl+T while the model answers
            _typing(pipe, "/quit\r", reply("Done.", thinking="HIDDEN-THOUGHT")),
        ]
    )
    shell, screen = await _shell(tmp_path, pipe, model, {})
    pipe.send_text("go\r")
    assert await asyncio.wait_for(shell.run(), 60) == 0
    shown = screen.getvalue()
    assert "Tool output: expanded" in shown
    assert "\n30\n" in shown  # the tool's output in full
    assert "more lines (collapsed)" not in shown
    assert "Thinking blocks: hidden" in shown
    assert "HIDDEN-THOUGHT" not in shown
    settings = json.loads((tmp_path / "agent" / "settings.json").read_text(encoding="utf-8"))
    assert settings == {"hideThinkingBlock": True}


async def test_an_unbound_ctrl_z_types_nothing(tmp_path: Path, pipe: PipeInput) -> None:
    # as in pi, a control key bound to nothing does nothing (prompt_toolkit would insert ^Z)
    model = ScriptedModel([_typing(pipe, "/quit\r", reply("Done."))])
    shell, _screen = await _shell(tmp_path, pipe, model, {"app.suspend": []})
    pipe.send_text("a\x1ab\r")
    assert await asyncio.wait_for(shell.run(), 60) == 0
    assert _users(shell) == ["ab"]
