"""The credentials and trust family: ``/login``, ``/logout``, ``/trust``.

pictx stores API keys only (no OAuth browser flow): ``/login`` writes one to
``<agentDir>/auth.json`` (asked without echo), ``/logout`` removes it. ``/trust`` saves
whether the session's directory is trusted, the only way besides ``pictx trust`` /
``pictx distrust``.
"""

from __future__ import annotations

import os

from rich.text import Text

from pi_context.cli.app.agent_api import ProjectTrust
from pi_context.cli.interactive.shell import Shell
from pi_context.cli.interactive.slash.registry import BUILT_INS

__all__: list[str] = []


@BUILT_INS.command("login", "/login [provider]", "store an API key in auth.json")
async def login(shell: Shell, args: str) -> None:
    """``/login [provider]``: store an API key for a provider in ``<agentDir>/auth.json``
    (asked without echo). pictx runs no OAuth browser flow."""
    known = shell.agent.login_providers()
    info = shell.agent.model_info()
    current = info.provider if info is not None and info.provider in known else ""
    provider = args.strip()
    if not provider:
        hint = f" [{current}]" if current else ""
        provider = (await shell.ask(f"Provider to store an API key for{hint}: ")).strip()
        provider = provider or current
    if not provider:
        shell.console.print("Login cancelled.")
        return
    if provider not in known:
        shell.console.print(
            Text(f'Unknown provider "{provider}". Known providers: {", ".join(known)}', "red")
        )
        return
    key = (await shell.ask(f"API key for {provider} (input hidden): ", secret=True)).strip()
    if not key:
        shell.console.print("Login cancelled.")
        return
    path = shell.agent.login(provider, key)
    shell.console.print(Text(f"Stored an API key for {provider} in {path}.", style="green"))


@BUILT_INS.command("logout", "/logout [provider]", "remove a stored credential")
async def logout(shell: Shell, args: str) -> None:
    """``/logout [provider]``: remove a provider's stored credential from auth.json."""
    stored = shell.agent.stored_logins()
    provider = args.strip()
    if not provider:
        if not stored:
            shell.console.print("No stored credentials.")
            return
        default = stored[0] if len(stored) == 1 else ""
        hint = f" [{default}]" if default else f" ({', '.join(stored)})"
        provider = (await shell.ask(f"Log out of which provider{hint}: ")).strip() or default
    if not provider:
        shell.console.print("Logout cancelled.")
        return
    if shell.agent.logout(provider):
        shell.console.print(Text(f"Removed the stored credential for {provider}.", "green"))
    else:
        shell.console.print(Text(f"No stored credential for {provider}."))


def _saved_decision(trust: ProjectTrust) -> str:
    found = trust.store.lookup(trust.directory)
    if found is None:
        return "none"
    directory, value = found
    word = "trusted" if value else "untrusted"
    if directory == os.path.realpath(trust.directory):
        return f"{word} ({directory})"
    return f"{word} (inherited from {directory})"


@BUILT_INS.command("trust", "/trust", "save whether this project is trusted")
async def trust(shell: Shell, _args: str) -> None:
    """Save a trust decision for the session's directory: the only way trust is recorded here
    besides ``pictx trust``/``pictx distrust``."""
    trust = shell.agent.project_trust()
    here = os.path.realpath(trust.directory)
    parent = os.path.dirname(here)
    shell.console.print(Text(f"Directory: {here}"))
    shell.console.print(Text(f"Saved decision: {_saved_decision(trust)}"))
    current = "trusted" if trust.decision.trusted else "untrusted"
    shell.console.print(Text(f"Current session: {current}"))
    # (label, directory to save, decision)
    options = [("Trust", here, True)]
    if parent != here:
        options.append((f"Trust parent folder ({parent})", parent, True))
    options.append(("Do not trust", here, False))
    for number, (label, _, _) in enumerate(options, start=1):
        shell.console.print(Text(f"{number:>3} {label}"))
    choice = (await shell.ask("Choose # (empty cancels): ")).strip()
    if not choice.isdigit() or not 1 <= int(choice) <= len(options):
        shell.console.print("Nothing saved.")
        return
    _, directory, trusted = options[int(choice) - 1]
    trust.store.set(directory, trusted)
    if directory != here:
        trust.store.set(here, None)  # the parent's decision applies here from now on
    word = "trusted" if trusted else "untrusted"
    shell.console.print(
        f"[green]Saved trust decision: {word}.[/green] /reload applies it to settings, prompts "
        "and skills; restart pictx for extensions."
    )
