"""``@file`` arguments with images: sniffed by content, attached to the first
prompt only, a text contribution per image, failures inside the tag."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pytest

from pi_context.cli.app.file_args import plan_prompts
from pi_context.errors import ResourceError
from tests.cli.helpers import InProcessRun, PictxInProcess, sessions_of
from tests.images.helpers import image_bytes, png_bomb

Replies = Callable[..., str]


def test_an_image_is_attached_to_the_first_prompt_with_an_empty_tag(project_as_cwd: Path) -> None:
    png = image_bytes("PNG")
    (project_as_cwd / "shot.png").write_bytes(png)
    plan = plan_prompts(["@shot.png", "What is this?", "And then?"], None, str(project_as_cwd))
    assert plan.prompts == [
        f'<file name="{project_as_cwd / "shot.png"}"></file>\nWhat is this?',
        "And then?",
    ]
    assert plan.images == (
        {"type": "image", "data": base64.b64encode(png).decode(), "mimeType": "image/png"},
    )


def test_the_type_comes_from_the_content_not_the_name(project_as_cwd: Path) -> None:
    (project_as_cwd / "photo.txt").write_bytes(image_bytes("JPEG"))
    (project_as_cwd / "fake.png").write_text("just text\n")
    plan = plan_prompts(["@photo.txt", "@fake.png"], None, str(project_as_cwd))
    assert [i["mimeType"] for i in plan.images] == ["image/jpeg"]
    assert plan.prompts == [
        f'<file name="{project_as_cwd / "photo.txt"}"></file>\n'
        f'<file name="{project_as_cwd / "fake.png"}">\njust text\n\n</file>\n'
    ]


def test_an_image_alone_is_a_prompt(project_as_cwd: Path) -> None:
    (project_as_cwd / "a.gif").write_bytes(image_bytes("GIF"))
    plan = plan_prompts(["@a.gif"], None, str(project_as_cwd))
    assert plan.prompts == [f'<file name="{project_as_cwd / "a.gif"}"></file>\n']
    assert len(plan.images) == 1


def test_a_truncated_image_says_why_inside_its_tag_and_is_not_attached(
    project_as_cwd: Path,
) -> None:
    png = image_bytes("PNG", size=(300, 200))
    (project_as_cwd / "cut.png").write_bytes(png[: len(png) // 2])
    plan = plan_prompts(["@cut.png", "look"], None, str(project_as_cwd))
    assert plan.images == ()
    (prompt,) = plan.prompts
    assert prompt.startswith(f'<file name="{project_as_cwd / "cut.png"}">image/png data is ')
    assert prompt.endswith("</file>\nlook")
    assert "\n" not in prompt.removesuffix("\nlook").removesuffix("</file>")


@pytest.mark.parametrize(
    ("size", "why"),
    [
        ((10_000, 6_000), "image is 10000x6000 pixels, over the 50 megapixels pictx decodes"),
        ((100_000, 100_000), "image is over the 50 megapixels pictx decodes"),
    ],
)
def test_a_decompression_bomb_is_refused_without_decoding(
    project_as_cwd: Path, size: tuple[int, int], why: str
) -> None:
    (project_as_cwd / "bomb.png").write_bytes(png_bomb(*size))
    plan = plan_prompts(["@bomb.png"], None, str(project_as_cwd))
    assert plan.images == ()
    assert plan.prompts == [f'<file name="{project_as_cwd / "bomb.png"}">{why}</file>\n']


def test_an_unreadable_file_stops_the_run(
    project_as_cwd: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project_as_cwd / "secret.txt").write_text("x")
    real_open = Path.open

    def deny(self: Path, *args: object, **kwargs: object) -> object:
        if self.name == "secret.txt":
            raise PermissionError(13, "Permission denied", str(self))
        return real_open(self, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(Path, "open", deny)
    with pytest.raises(ResourceError) as caught:
        plan_prompts(["@secret.txt"], None, str(project_as_cwd))
    assert (
        str(caught.value)
        == f"Could not read file {project_as_cwd / 'secret.txt'}: Permission denied"
    )


def test_print_mode_stores_the_image_in_the_first_user_message(
    project_as_cwd: Path, pictx_in_process: PictxInProcess, replies: Replies
) -> None:
    png = image_bytes("PNG")
    (project_as_cwd / "shot.png").write_bytes(png)
    run: InProcessRun = pictx_in_process(
        "-p", "--model", replies(["one", "two"]), "@shot.png", "first", "second"
    )
    assert run.code == 0, run.err
    lines = [
        json.loads(x)
        for x in sessions_of(project_as_cwd.parent / "agent", project_as_cwd)[0]
        .read_text()
        .splitlines()
    ]
    users = [
        e["message"] for e in lines if e.get("type") == "message" and e["message"]["role"] == "user"
    ]
    assert users[0]["content"] == [
        {"type": "text", "text": f'<file name="{project_as_cwd / "shot.png"}"></file>\nfirst'},
        {"type": "image", "data": base64.b64encode(png).decode(), "mimeType": "image/png"},
    ]
    assert users[1]["content"] == [{"type": "text", "text": "second"}]


def test_a_missing_file_is_an_error_exit(
    project_as_cwd: Path, pictx_in_process: PictxInProcess, replies: Replies
) -> None:
    run: InProcessRun = pictx_in_process("-p", "--model", replies(["x"]), "@nope.png", "hi")
    assert run.code == 1
    assert f"File not found: {project_as_cwd / 'nope.png'}" in run.err


def test_session_context_shows_images_as_marks_not_base64(
    project_as_cwd: Path, pictx_in_process: PictxInProcess, replies: Replies
) -> None:
    png = image_bytes("PNG", size=(64, 64))
    (project_as_cwd / "shot.png").write_bytes(png)
    run: InProcessRun = pictx_in_process("-p", "--model", replies(["seen"]), "@shot.png", "look")
    assert run.code == 0, run.err
    (session,) = sessions_of(project_as_cwd.parent / "agent", project_as_cwd)
    data = base64.b64encode(png).decode()
    shown: InProcessRun = pictx_in_process("session", "context", str(session))
    assert f"[image/png {len(data) * 3 / 4 / 1024:.1f} KB] <file name=" in shown.out
    assert data not in shown.out
    piped: InProcessRun = pictx_in_process("session", "context", str(session), "--json")
    users = [
        r["message"] for r in json.loads(piped.out)["messages"] if r["message"]["role"] == "user"
    ]
    assert users[0]["content"][1]["data"] == data  # piped output keeps the image


def test_json_for_a_terminal_replaces_image_data_by_its_length() -> None:
    from pi_context.cli.commands.session import _without_image_data

    message = {
        "role": "user",
        "content": [
            {"type": "text", "text": "t"},
            {"type": "image", "data": "QUJD", "mimeType": "image/png"},
        ],
    }
    assert _without_image_data(message)["content"][1] == {
        "type": "image",
        "data": "<4 characters of base64; pipe to get them>",
        "mimeType": "image/png",
    }


async def test_interactive_mode_attaches_the_images_to_the_first_prompt_only(
    tmp_path: Path,
) -> None:
    import io

    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput
    from rich.console import Console

    from pi_context.cli.app.app import AppConfig, RunningAgent
    from pi_context.cli.interactive.mode import InteractiveShell
    from pi_context.testing import ScriptedModel, reply

    (tmp_path / "agent").mkdir()
    model = ScriptedModel([reply("one"), reply("two")])
    config = AppConfig(cwd=str(tmp_path), agent_dir=tmp_path / "agent", session_dir=None)
    agent = RunningAgent(await config.create(model), config)
    image = {
        "type": "image",
        "data": base64.b64encode(image_bytes("PNG")).decode(),
        "mimeType": "image/png",
    }
    console = Console(file=io.StringIO(), width=100, force_terminal=False, color_system=None)
    with create_pipe_input() as keys:
        shell = InteractiveShell(agent, console=console, pt_input=keys, pt_output=DummyOutput())
        keys.send_text("/quit\r")
        await shell.run(["first", "second"], images=[image])  # type: ignore[list-item]
    users = [cast(dict[str, Any], e.message) for e in agent.session.entries if e.role == "user"]
    assert [u["content"] for u in users] == [
        [{"type": "text", "text": "first"}, image],
        [{"type": "text", "text": "second"}],
    ]
