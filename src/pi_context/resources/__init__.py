"""Resources that decide the system prompt: context files, SYSTEM.md/APPEND_SYSTEM.md, skills,
settings and project trust, gathered by :class:`ResourceLoader`."""

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
