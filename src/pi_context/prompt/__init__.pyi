from .assemble import PromptTool as PromptTool
from .assemble import default_tool_names as default_tool_names
from .assemble import prompt_options_for as prompt_options_for
from .assemble import system_prompt_for as system_prompt_for
from .replay import SystemState as SystemState
from .replay import apply_forced_prompt as apply_forced_prompt
from .replay import collapse_system_messages as collapse_system_messages
from .replay import get_current_system_message as get_current_system_message
from .replay import get_current_system_prompt as get_current_system_prompt
from .replay import get_current_tools as get_current_tools
from .replay import replay_system_state as replay_system_state
from .replay import system_message_for_update as system_message_for_update
from .sections import SystemPromptOptions as SystemPromptOptions
from .sections import build_sections as build_sections
from .sections import build_system_prompt as build_system_prompt
from .sections import format_skills_for_prompt as format_skills_for_prompt
from .wording import DEFAULT_WORDING as DEFAULT_WORDING
from .wording import PromptWording as PromptWording

__all__: list[str]  # the names above, in ruff's order (_lazy.attach_stub)
