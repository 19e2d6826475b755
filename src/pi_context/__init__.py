"""pi-context: the context engine of a coding agent, compatible with pi 1.6.0's sessions.

The names below cover the main jobs; everything else lives in the subpackages
(:mod:`pi_context.session`, :mod:`pi_context.prompt`, :mod:`pi_context.compaction`,
:mod:`pi_context.providers`, ...).

Open and project a session::

    with Session.open("session.jsonl") as session:
        messages = session.projection().messages

Build a system prompt::

    resources = ResourceLoader("path/to/project").load()
    text = system_prompt_for(resources, default_tools())

Run an agent, and test it with fakes (the events it yields are importable from here too)::

    agent = await AgentSession.create(cwd=".", model=ScriptedModel([reply("hi")]))
    events = await agent.run("hello")

Importing this package has no side effects: nothing is read, written, printed or registered,
and nothing else is imported until a name is used (``pictx --version`` must not load the
agent); each name below is imported from its module on first access.
"""

# Not ``typing.TYPE_CHECKING``: ``import typing`` (with re, enum, contextlib) would be most of
# what ``pictx --version`` imports; type checkers treat any constant of this name alike.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from pi_context.agent.session import AgentOptions, AgentSession
    from pi_context.compaction.engine import Compactor, compact
    from pi_context.errors import (
        CompactionError,
        ExtensionError,
        PiContextError,
        PromptError,
        ProviderError,
        SessionError,
        SessionFormatError,
        SettingsError,
        ToolError,
    )
    from pi_context.events import (
        AgentEnd,
        AgentEvent,
        AgentSettled,
        AgentStart,
        AssistantStreamEvent,
        AutoRetryEnd,
        AutoRetryStart,
        CacheUpdate,
        CompactionEnd,
        CompactionFallback,
        CompactionPaused,
        CompactionStart,
        EntryAppended,
        ExtensionFailure,
        MessageEnd,
        MessageStart,
        MessageUpdate,
        ObservationsMasked,
        QueueUpdate,
        SummarizationRetryAttemptStart,
        SummarizationRetryFinished,
        SummarizationRetryScheduled,
        ToolExecutionEnd,
        ToolExecutionStart,
        ToolExecutionUpdate,
        TreeNavigated,
        TurnEnd,
        TurnStart,
    )
    from pi_context.extensions.api import ExtensionAPI
    from pi_context.extensions.context import ExtensionContext
    from pi_context.extensions.hooks import ExtensionHooks
    from pi_context.extensions.loader import load_extensions
    from pi_context.messages import text_of, user_message
    from pi_context.model.protocol import (
        Model,
        ModelInfo,
        ModelRequest,
        RequestOptions,
        StreamDone,
        complete,
    )
    from pi_context.model.retry import RetryPolicy
    from pi_context.prompt.assemble import prompt_options_for, system_prompt_for
    from pi_context.prompt.sections import SystemPromptOptions
    from pi_context.resources.loader import LoadedResources, ResourceLoader
    from pi_context.resources.settings import (
        CompactionSettings,
        RetrySettings,
        Settings,
        compaction_settings_for,
        load_settings,
        retry_settings_for,
    )
    from pi_context.session.entries import Entry
    from pi_context.session.projection import Projection, convert_to_llm
    from pi_context.session.search import SearchHit
    from pi_context.session.store import Session
    from pi_context.testing import (
        FixedClock,
        ScriptedModel,
        ScriptedReply,
        SequentialIds,
        failure,
        reply,
    )
    from pi_context.tokens import estimate_tokens
    from pi_context.tools.base import FunctionTool, Tool, ToolOutcome
    from pi_context.tools.registry import default_tools

del TYPE_CHECKING  # not a name of the package

__all__ = [
    "AgentEnd",
    "AgentEvent",
    "AgentOptions",
    "AgentSession",
    "AgentSettled",
    "AgentStart",
    "AssistantStreamEvent",
    "AutoRetryEnd",
    "AutoRetryStart",
    "CacheUpdate",
    "CompactionEnd",
    "CompactionError",
    "CompactionFallback",
    "CompactionPaused",
    "CompactionSettings",
    "CompactionStart",
    "Compactor",
    "Entry",
    "EntryAppended",
    "ExtensionAPI",
    "ExtensionContext",
    "ExtensionError",
    "ExtensionFailure",
    "ExtensionHooks",
    "FixedClock",
    "FunctionTool",
    "LoadedResources",
    "MessageEnd",
    "MessageStart",
    "MessageUpdate",
    "Model",
    "ModelInfo",
    "ModelRequest",
    "ObservationsMasked",
    "PiContextError",
    "Projection",
    "PromptError",
    "ProviderError",
    "QueueUpdate",
    "RequestOptions",
    "ResourceLoader",
    "RetryPolicy",
    "RetrySettings",
    "ScriptedModel",
    "ScriptedReply",
    "SearchHit",
    "SequentialIds",
    "Session",
    "SessionError",
    "SessionFormatError",
    "Settings",
    "SettingsError",
    "StreamDone",
    "SummarizationRetryAttemptStart",
    "SummarizationRetryFinished",
    "SummarizationRetryScheduled",
    "SystemPromptOptions",
    "Tool",
    "ToolError",
    "ToolExecutionEnd",
    "ToolExecutionStart",
    "ToolExecutionUpdate",
    "ToolOutcome",
    "TreeNavigated",
    "TurnEnd",
    "TurnStart",
    "compact",
    "compaction_settings_for",
    "complete",
    "convert_to_llm",
    "default_tools",
    "estimate_tokens",
    "failure",
    "load_extensions",
    "load_settings",
    "prompt_options_for",
    "reply",
    "retry_settings_for",
    "system_prompt_for",
    "text_of",
    "user_message",
]

_HOMES = {
    "AgentEnd": "pi_context.events",
    "AgentEvent": "pi_context.events",
    "AgentOptions": "pi_context.agent.session",
    "AgentSession": "pi_context.agent.session",
    "AgentSettled": "pi_context.events",
    "AgentStart": "pi_context.events",
    "AssistantStreamEvent": "pi_context.events",
    "AutoRetryEnd": "pi_context.events",
    "AutoRetryStart": "pi_context.events",
    "CacheUpdate": "pi_context.events",
    "CompactionEnd": "pi_context.events",
    "CompactionError": "pi_context.errors",
    "CompactionFallback": "pi_context.events",
    "CompactionPaused": "pi_context.events",
    "CompactionSettings": "pi_context.resources.settings",
    "CompactionStart": "pi_context.events",
    "Compactor": "pi_context.compaction.engine",
    "Entry": "pi_context.session.entries",
    "EntryAppended": "pi_context.events",
    "ExtensionAPI": "pi_context.extensions.api",
    "ExtensionContext": "pi_context.extensions.context",
    "ExtensionError": "pi_context.errors",
    "ExtensionFailure": "pi_context.events",
    "ExtensionHooks": "pi_context.extensions.hooks",
    "FixedClock": "pi_context.testing",
    "FunctionTool": "pi_context.tools.base",
    "LoadedResources": "pi_context.resources.loader",
    "MessageEnd": "pi_context.events",
    "MessageStart": "pi_context.events",
    "MessageUpdate": "pi_context.events",
    "Model": "pi_context.model.protocol",
    "ModelInfo": "pi_context.model.protocol",
    "ModelRequest": "pi_context.model.protocol",
    "ObservationsMasked": "pi_context.events",
    "PiContextError": "pi_context.errors",
    "Projection": "pi_context.session.projection",
    "PromptError": "pi_context.errors",
    "ProviderError": "pi_context.errors",
    "QueueUpdate": "pi_context.events",
    "RequestOptions": "pi_context.model.protocol",
    "ResourceLoader": "pi_context.resources.loader",
    "RetryPolicy": "pi_context.model.retry",
    "RetrySettings": "pi_context.resources.settings",
    "ScriptedModel": "pi_context.testing",
    "ScriptedReply": "pi_context.testing",
    "SearchHit": "pi_context.session.search",
    "SequentialIds": "pi_context.testing",
    "Session": "pi_context.session.store",
    "SessionError": "pi_context.errors",
    "SessionFormatError": "pi_context.errors",
    "Settings": "pi_context.resources.settings",
    "SettingsError": "pi_context.errors",
    "StreamDone": "pi_context.model.protocol",
    "SummarizationRetryAttemptStart": "pi_context.events",
    "SummarizationRetryFinished": "pi_context.events",
    "SummarizationRetryScheduled": "pi_context.events",
    "SystemPromptOptions": "pi_context.prompt.sections",
    "Tool": "pi_context.tools.base",
    "ToolError": "pi_context.errors",
    "ToolExecutionEnd": "pi_context.events",
    "ToolExecutionStart": "pi_context.events",
    "ToolExecutionUpdate": "pi_context.events",
    "ToolOutcome": "pi_context.tools.base",
    "TreeNavigated": "pi_context.events",
    "TurnEnd": "pi_context.events",
    "TurnStart": "pi_context.events",
    "compact": "pi_context.compaction.engine",
    "compaction_settings_for": "pi_context.resources.settings",
    "complete": "pi_context.model.protocol",
    "convert_to_llm": "pi_context.session.projection",
    "default_tools": "pi_context.tools.registry",
    "estimate_tokens": "pi_context.tokens",
    "failure": "pi_context.testing",
    "load_extensions": "pi_context.extensions.loader",
    "load_settings": "pi_context.resources.settings",
    "prompt_options_for": "pi_context.prompt.assemble",
    "reply": "pi_context.testing",
    "retry_settings_for": "pi_context.resources.settings",
    "system_prompt_for": "pi_context.prompt.assemble",
    "text_of": "pi_context.messages",
    "user_message": "pi_context.messages",
}
"""Where each public name lives; imported from there when first used."""


def __getattr__(name: str) -> object:
    import importlib

    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'pi_context' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
