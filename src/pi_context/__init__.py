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

Run an agent, and test it with fakes::

    agent = await AgentSession.create(cwd=".", model=ScriptedModel([reply("hi")]))
    events = await agent.run("hello")

Importing this package has no side effects: nothing is read, written, printed or registered,
and no provider SDK is imported.
"""

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

__all__ = [
    "AgentOptions",
    "AgentSession",
    "CompactionError",
    "CompactionSettings",
    "Compactor",
    "Entry",
    "ExtensionAPI",
    "ExtensionContext",
    "ExtensionError",
    "ExtensionHooks",
    "FixedClock",
    "FunctionTool",
    "LoadedResources",
    "Model",
    "ModelInfo",
    "ModelRequest",
    "PiContextError",
    "Projection",
    "PromptError",
    "ProviderError",
    "RequestOptions",
    "ResourceLoader",
    "RetryPolicy",
    "RetrySettings",
    "ScriptedModel",
    "ScriptedReply",
    "SequentialIds",
    "Session",
    "SessionError",
    "SessionFormatError",
    "Settings",
    "SettingsError",
    "StreamDone",
    "SystemPromptOptions",
    "Tool",
    "ToolError",
    "ToolOutcome",
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
