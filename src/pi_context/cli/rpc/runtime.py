"""What RPC mode keeps between commands: the current session, its event forwarding, the run
started by the last ``prompt``, user bash commands and the extension UI.

Every event of the current agent session is written to the client as it happens (the
``to_json()`` record ``--mode json`` writes too). Replacing the session (``new_session``,
``switch_session``, ``fork``, ``clone``) aborts and closes the old one first (unless an
extension cancels the replacement); its queued
messages are lost, as in pi. ``bashExecution`` messages recorded while a run is active are
held and appended once it settles.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from pi_context.cli.app.agent_api import AgentApi
from pi_context.events import AgentSettled
from pi_context.messages import AgentMessage, ImageContent

from .extension_ui import RpcExtensionUI
from .user_bash import UserBash

if TYPE_CHECKING:
    from pi_context.events import AgentEvent

__all__ = ["RpcRuntime"]


class RpcRuntime:
    """The state of one RPC process."""

    def __init__(self, agent: AgentApi, send: Callable[[Mapping[str, Any]], None]) -> None:
        self.agent = agent
        self.send = send
        self.forwarding = True
        self.ui = RpcExtensionUI(lambda record: self.send(record))
        self.bash = UserBash()
        self._held: list[AgentMessage] = []
        self._run: asyncio.Task[None] | None = None
        self._unsubscribe = agent.subscribe(self._on_event)
        agent.set_extension_ui(self.ui, "rpc")
        self.on_exit_request: Callable[[], None] = lambda: None
        """Called when an extension asks to end the process (``ctx.shutdown()``)."""
        agent.on_shutdown_request(self._exit_requested)
        agent.on_session_name(self._named)

    def _named(self, name: str | None) -> None:
        """However the session was named (RPC, an extension), the client hears of it."""
        self.emit_record({"type": "session_info_changed", "name": name})

    def _exit_requested(self) -> None:
        self.on_exit_request()

    # -- events -----------------------------------------------------------------------------------

    def _on_event(self, event: AgentEvent) -> None:
        if self.forwarding:
            self.send(event.to_json())
        if isinstance(event, AgentSettled):
            self._flush_held()

    def emit_record(self, record: Mapping[str, Any]) -> None:
        """A record of RPC's own doing (e.g. ``thinking_level_changed``)."""
        if self.forwarding:
            self.send(record)

    # -- runs -------------------------------------------------------------------------------------

    @property
    def streaming(self) -> bool:
        """A run is active, or a ``prompt`` was accepted and its run is starting."""
        return self.agent.busy or (self._run is not None and not self._run.done())

    def start_prompt(self, text: str, images: tuple[ImageContent, ...]) -> None:
        """Run ``text`` in the background; its events reach the client through the
        subscription."""
        agent = self.agent

        async def drain() -> None:
            try:
                async for _event in agent.prompt(text, images=images):
                    pass
            except Exception as exc:  # noqa: BLE001 - after "started", errors are diagnostics
                print(f"pictx: prompt failed: {exc}", file=sys.stderr, flush=True)

        self._run = asyncio.get_running_loop().create_task(drain())

    async def wait_idle(self) -> None:
        await self.wait_idle_run()
        await self.agent.wait_idle()

    async def wait_idle_run(self) -> None:
        """Until the task draining the last ``prompt`` has ended."""
        if self._run is not None:
            await asyncio.wait([self._run])

    # -- bash executions --------------------------------------------------------------------------

    def record_bash(self, message: AgentMessage) -> None:
        if self.streaming:
            self._held.append(message)
        else:
            self.agent.session.append_message(message)

    def _flush_held(self) -> None:
        held, self._held = self._held, []
        for message in held:
            self.agent.session.append_message(message)

    # -- session replacement ----------------------------------------------------------------------

    async def replace(self, make: Callable[[], Awaitable[AgentApi]]) -> None:
        """Switch to the session ``make()`` awaits to: it asks the extensions (and may raise
        ``SwitchCancelledError``, leaving everything as it was), then ends the old session (its
        run aborted) and starts the new one (:mod:`pi_context.cli.app.session_replacement`)."""
        old = self.agent
        new = await make()
        await self.wait_idle_run()
        self._unsubscribe()
        self._held.clear()
        self.agent = new
        self._unsubscribe = new.subscribe(self._on_event)
        new.set_extension_ui(self.ui, "rpc")
        old.on_shutdown_request(None)
        new.on_shutdown_request(self._exit_requested)
        old.on_session_name(None)
        new.on_session_name(self._named)
        with contextlib.suppress(Exception):
            await old.aclose()

    async def shutdown(self) -> None:
        """Stop forwarding, abort what runs, tell extensions, close the session."""
        self.forwarding = False
        self.bash.abort_all()
        self.agent.abort()
        await self.wait_idle()
        self._unsubscribe()
        await self.agent.aclose()
