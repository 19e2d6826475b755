"""System-prompt sections, their diff/replay through transcript system messages, and the
request-time projections (forced prompt, collapsed prompt)."""

from typing import TYPE_CHECKING

from pi_context import _lazy

if TYPE_CHECKING:
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

_HOMES = _lazy.homes(
    {
        "pi_context.prompt.assemble": (
            "PromptTool",
            "default_tool_names",
            "prompt_options_for",
            "system_prompt_for",
        ),
        "pi_context.prompt.replay": (
            "SystemState",
            "apply_forced_prompt",
            "collapse_system_messages",
            "get_current_system_message",
            "get_current_system_prompt",
            "get_current_tools",
            "replay_system_state",
            "system_message_for_update",
        ),
        "pi_context.prompt.sections": (
            "SystemPromptOptions",
            "build_sections",
            "build_system_prompt",
            "format_skills_for_prompt",
        ),
        "pi_context.prompt.wording": (
            "DEFAULT_WORDING",
            "PromptWording",
        ),
    }
)
"""Where each public name lives; imported from there when first used."""

__getattr__, __dir__ = _lazy.hooks(globals(), _HOMES, __all__)
