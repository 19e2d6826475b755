"""Extension slash commands: invocation names when a name repeats, refusals at registration."""

from __future__ import annotations

from typing import Any

import pytest

from pi_context.errors import ExtensionError
from pi_context.extensions import ExtensionAPI, ExtensionRunner, load_extensions


def _runner(*registers: Any) -> ExtensionRunner:
    return load_extensions(
        cwd=".",
        entry_points=False,
        include_discovered=False,
        registrations=[(f"ext{i}", r) for i, r in enumerate(registers)],
    )


async def test_a_repeated_name_gets_numbered_invocation_names() -> None:
    ran: list[str] = []

    def first(pi: ExtensionAPI) -> None:
        pi.register_command("deploy", lambda args, ctx: ran.append(f"first {args}"))
        pi.register_command("deploy:2", lambda args, ctx: ran.append("taken"))
        pi.register_command("status", lambda args, ctx: None)

    def second(pi: ExtensionAPI) -> None:
        pi.register_command("/deploy", lambda args, ctx: ran.append(f"second {args}"))

    runner = _runner(first, second)
    names = [(c.name, c.extension) for c in runner.commands()]
    # "deploy:2" is taken by a bare name, so the second "deploy" skips to 3
    assert names == [
        ("deploy:1", "ext0"),
        ("deploy:2", "ext0"),
        ("status", "ext0"),
        ("deploy:3", "ext1"),
    ]
    assert await runner.run_command("deploy:3", "prod")
    assert await runner.run_command("deploy:1", "dev")
    assert not await runner.run_command("deploy", "")
    assert ran == ["second prod", "first dev"]


@pytest.mark.parametrize(("name", "handler"), [("", print), ("/", print), ("ok", "not callable")])
def test_registration_refuses_an_empty_name_or_a_handler_that_is_no_function(
    name: str, handler: Any
) -> None:
    def register(pi: ExtensionAPI) -> None:
        pi.register_command(name, handler)

    runner = _runner(register)
    assert runner.commands() == []
    [error] = runner.load_errors
    assert isinstance(error, ExtensionError)
    assert "register_command" in str(error)
