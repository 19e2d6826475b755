"""System-prompt sections, their diff/replay through transcript system messages, and the
request-time projections (forced prompt, collapsed prompt)."""

from pi_context.prompt.assemble import (
    PromptTool,
    default_tool_names,
    prompt_options_for,
    system_prompt_for,
)
from pi_context.prompt.replay import (
    SystemState,
    apply_forced_prompt,
    collapse_system_messages,
    get_current_system_message,
    get_current_system_prompt,
    get_current_tools,
    replay_system_state,
    system_message_for_update,
)
from pi_context.prompt.sections import (
    SystemPromptOptions,
    build_sections,
    build_system_prompt,
    format_skills_for_prompt,
)
from pi_context.prompt.wording import DEFAULT_WORDING, PromptWording

__all__ = [
    "DEFAULT_WORDING",
    "PromptTool",
    "PromptWording",
    "SystemPromptOptions",
    "SystemState",
    "apply_forced_prompt",
    "build_sections",
    "build_system_prompt",
    "collapse_system_messages",
    "default_tool_names",
    "format_skills_for_prompt",
    "get_current_system_message",
    "get_current_system_prompt",
    "get_current_tools",
    "prompt_options_for",
    "replay_system_state",
    "system_message_for_update",
    "system_prompt_for",
]
