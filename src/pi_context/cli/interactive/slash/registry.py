"""The one registry of slash commands: built-ins and extension commands go through
:meth:`SlashRegistry.register` alike.

A family module (:mod:`~pi_context.cli.interactive.slash.session`, ``model``, ``auth``,
``app``) registers its built-ins with the :meth:`SlashRegistry.command` decorator on
:data:`BUILT_INS`, the way IPython's magics classes register their methods. For the running
session, :func:`commands_for` copies the built-ins and registers each extension command
(``ExtensionAPI.register_command``) through the same :meth:`~SlashRegistry.register`.

A name is one command. A built-in shadows an extension command of the same name, as in pi's
terminal (the extension command is kept in :attr:`SlashRegistry.shadowed`, and ``/help`` says
so; RPC clients still reach it with ``prompt``). Two extensions registering one name never
meet here: the extension runner gives each an invocation name ``<name>:<k>``. Prompt templates
come last (pi's order: an extension command, then a template): a template named as a built-in
or an extension command is hidden the same way, and ``/help`` says so.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass

from rich.markup import escape
from rich.text import Text

from pi_context.cli.app.agent_api import AgentApi
from pi_context.cli.app.session_replacement import SwitchCancelledError
from pi_context.cli.interactive.shell import Shell
from pi_context.errors import PiContextError
from pi_context.extensions import RegisteredCommand
from pi_context.resources.packages import parse_package_source
from pi_context.resources.prompt_templates import PromptTemplate
from pi_context.resources.types import SkillSourceInfo

__all__ = [
    "BUILT_INS",
    "Handler",
    "SlashCommand",
    "SlashRegistry",
    "commands_for",
    "parse_slash",
    "run_slash",
    "source_tag",
    "template_command",
]

Handler = Callable[[Shell, str], Awaitable[None]]
"""``(shell, argument text)``: one form of a command, text and picker alike."""

BUILT_IN = "built-in"
PROMPT_TEMPLATE = "prompt template"


@dataclass(frozen=True, slots=True)
class SlashCommand:
    name: str
    """What follows ``/``; ``skill:`` stands for every ``/skill:<name>``."""
    usage: str
    help: str
    handler: Handler
    aliases: tuple[str, ...] = ()
    source: str = BUILT_IN
    """``built-in``, the extension that registered it, or ``prompt template``."""
    file: str | None = None
    """The prompt template's file."""
    completes: bool = True
    """Offered by Tab completion as ``/name``."""


def parse_slash(line: str) -> tuple[str, str] | None:
    """``("compact", "keep the API notes")`` for ``/compact keep the API notes``;
    ``("skill:", "skill:greet the team")`` for ``/skill:greet the team``; else ``None``."""
    text = line.strip()
    if not text.startswith("/") or len(text) < 2:
        return None
    name, _, rest = text[1:].partition(" ")
    if name.startswith("skill:"):
        return "skill:", text[1:]
    return name, rest.strip()


class SlashRegistry:
    """Commands by name (and alias), in registration order."""

    def __init__(self) -> None:
        self._commands: dict[str, SlashCommand] = {}
        self._aliases: dict[str, str] = {}
        self.shadowed: list[SlashCommand] = []
        """Extension commands a built-in of the same name hides."""

    def register(self, command: SlashCommand) -> bool:
        """Add ``command``; ``False`` when its name (or an alias) is taken. A built-in taking a
        taken name is a programming error; an extension command is kept in :attr:`shadowed`."""
        names = (command.name, *command.aliases)
        if any(self.lookup(name) is not None for name in names):
            if command.source == BUILT_IN:
                raise ValueError(f"slash command /{command.name} is registered twice")
            self.shadowed.append(command)
            return False
        self._commands[command.name] = command
        for alias in command.aliases:
            self._aliases[alias] = command.name
        return True

    def command(
        self,
        name: str,
        usage: str,
        help: str,
        *,
        aliases: tuple[str, ...] = (),
        completes: bool = True,
    ) -> Callable[[Handler], Handler]:
        """Decorator: register the handler as the built-in ``/name``."""

        def add(handler: Handler) -> Handler:
            self.register(
                SlashCommand(name, usage, help, handler, aliases=aliases, completes=completes)
            )
            return handler

        return add

    def lookup(self, name: str) -> SlashCommand | None:
        return self._commands.get(self._aliases.get(name, name))

    def __iter__(self) -> Iterator[SlashCommand]:
        return iter(self._commands.values())

    def names(self) -> list[str]:
        """Every completable command as typed (``/model``), for Tab."""
        return ["/" + c.name for c in self if c.completes]

    def copy(self) -> SlashRegistry:
        other = SlashRegistry()
        other._commands = dict(self._commands)
        other._aliases = dict(self._aliases)
        other.shadowed = list(self.shadowed)
        return other


BUILT_INS = SlashRegistry()
"""Filled by the family modules, which :mod:`pi_context.cli.interactive.slash` imports."""


def _extension_handler(name: str) -> Handler:
    async def run(shell: Shell, args: str) -> None:
        if not await shell.agent.run_extension_command(name, args):
            shell.console.print(Text(f"The extension command /{name} is gone.", style="red"))

    return run


def extension_command(registered: RegisteredCommand) -> SlashCommand:
    """An extension's ``register_command`` as a slash command."""
    return SlashCommand(
        registered.name,
        f"/{registered.name}",
        registered.description or f"from extension {registered.extension}",
        _extension_handler(registered.name),
        source=registered.extension,
    )


def source_tag(info: SkillSourceInfo | None) -> str | None:
    """pi's short tag for where a resource came from: ``u`` (user), ``p`` (project), ``t``
    (temporary, e.g. ``--prompt-template``), with the package source for npm and git ones."""
    if info is None or info.source == "builtin":
        return None
    scope = {"user": "u", "project": "p"}.get(info.scope, "t")
    source = info.source.strip()
    if source in ("auto", "local", "cli"):
        return scope
    if source.startswith("npm:"):
        return f"{scope}:{source}"
    package = parse_package_source(source)  # a git package: host/path@ref
    if package.kind == "git":
        ref = f"@{package.ref}" if package.ref else ""
        return f"{scope}:git:{package.host}/{package.path}{ref}"
    return scope


def _template_handler(name: str) -> Handler:
    async def run(shell: Shell, args: str) -> None:
        # the session expands it (as it does for -p and RPC): the text sent is what was typed
        await shell.send(f"/{name} {args}" if args else f"/{name}")

    return run


def template_command(template: PromptTemplate) -> SlashCommand:
    """A prompt template as a slash command: ``/name [argument-hint]``, its description
    tagged with where it came from as pi's completion list tags it (``[u] Review ...``)."""
    usage = f"/{template.name}"
    if template.argument_hint:
        usage += f" {template.argument_hint}"
    tag = source_tag(template.source_info)
    description = template.description
    if tag is not None:
        description = f"[{tag}] {description}" if description else f"[{tag}]"
    return SlashCommand(
        template.name,
        usage,
        description,
        _template_handler(template.name),
        source=PROMPT_TEMPLATE,
        file=template.file_path,
    )


def commands_for(agent: AgentApi, built_ins: SlashRegistry = BUILT_INS) -> SlashRegistry:
    """The commands of the running session: the built-ins, then its extensions' commands,
    then its prompt templates."""
    registry = built_ins.copy()
    for registered in agent.extension_commands():
        registry.register(extension_command(registered))
    for template in agent.prompt_templates():
        registry.register(template_command(template))
    return registry


def shadowing_note(command: SlashCommand) -> str:
    if command.source == PROMPT_TEMPLATE:
        return (
            f"prompt template {command.file}: /{command.name} is hidden by another /{command.name}"
        )
    return f"extension {command.source}: /{command.name} is hidden by the built-in /{command.name}"


async def run_slash(shell: Shell, line: str) -> bool:
    """Run ``line`` if it is a slash command; ``False`` when it is not one (send it as text)."""
    parsed = parse_slash(line)
    if parsed is None:
        return False
    name, args = parsed
    command = commands_for(shell.agent).lookup(name)
    if command is None:
        shell.console.print(f"[red]Unknown command /{escape(name)}. Type /help for the list.[/red]")
        return True
    try:
        await command.handler(shell, args)
    except SwitchCancelledError as exc:
        shell.console.print(Text(str(exc), style="dim"))
    except PiContextError as exc:
        shell.console.print(Text(f"pictx: error: {exc}", style="red"))
    return True
