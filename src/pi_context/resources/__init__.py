"""Resources that decide the system prompt: context files, SYSTEM.md/APPEND_SYSTEM.md, skills,
settings and project trust, gathered by :class:`ResourceLoader`."""

from typing import TYPE_CHECKING

from pi_context import _lazy

if TYPE_CHECKING:
    from pi_context.resources.context_files import (
        load_context_files,
    )
    from pi_context.resources.loader import (
        LoadedResources,
        ResourceLoader,
    )
    from pi_context.resources.paths import (
        agent_dir,
    )
    from pi_context.resources.settings import (
        BranchSummarySettings,
        CompactionSettings,
        RetrySettings,
        Settings,
        branch_summary_settings_for,
        compaction_settings_for,
        load_settings,
        retry_settings_for,
    )
    from pi_context.resources.skills import (
        SkillsResult,
        expand_skill_command,
        load_skills,
    )
    from pi_context.resources.trust import (
        TrustDecision,
        TrustStore,
        resolve_project_trust,
    )
    from pi_context.resources.types import (
        ContextFile,
        Diagnostic,
        Skill,
    )

__all__ = [
    "BranchSummarySettings",
    "CompactionSettings",
    "ContextFile",
    "Diagnostic",
    "LoadedResources",
    "ResourceLoader",
    "RetrySettings",
    "Settings",
    "Skill",
    "SkillsResult",
    "TrustDecision",
    "TrustStore",
    "agent_dir",
    "branch_summary_settings_for",
    "compaction_settings_for",
    "expand_skill_command",
    "load_context_files",
    "load_settings",
    "load_skills",
    "resolve_project_trust",
    "retry_settings_for",
]

_HOMES = _lazy.homes(
    {
        "pi_context.resources.context_files": ("load_context_files",),
        "pi_context.resources.loader": (
            "LoadedResources",
            "ResourceLoader",
        ),
        "pi_context.resources.paths": ("agent_dir",),
        "pi_context.resources.settings": (
            "BranchSummarySettings",
            "CompactionSettings",
            "RetrySettings",
            "Settings",
            "branch_summary_settings_for",
            "compaction_settings_for",
            "load_settings",
            "retry_settings_for",
        ),
        "pi_context.resources.skills": (
            "SkillsResult",
            "expand_skill_command",
            "load_skills",
        ),
        "pi_context.resources.trust": (
            "TrustDecision",
            "TrustStore",
            "resolve_project_trust",
        ),
        "pi_context.resources.types": (
            "ContextFile",
            "Diagnostic",
            "Skill",
        ),
    }
)
"""Where each public name lives; imported from there when first used."""

__getattr__, __dir__ = _lazy.hooks(globals(), _HOMES, __all__)
