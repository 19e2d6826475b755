"""Resources that decide the system prompt: context files, SYSTEM.md/APPEND_SYSTEM.md, skills,
settings and project trust, gathered by :class:`ResourceLoader`."""

from pi_context.resources.context_files import (
    CONTEXT_FILE_NAMES,
    find_shadowed_context_file,
    load_context_file_from_dir,
    load_context_files,
)
from pi_context.resources.frontmatter import FrontmatterError, parse_frontmatter, strip_frontmatter
from pi_context.resources.loader import LoadedResources, ResourceLoader, resolve_prompt_input
from pi_context.resources.paths import AGENT_DIR_ENV, agent_dir, expand_home, home_dir
from pi_context.resources.settings import (
    BranchSummarySettings,
    CompactionSettings,
    RetrySettings,
    Settings,
    branch_summary_settings_for,
    compaction_settings_for,
    deep_merge_settings,
    load_settings,
    retry_settings_for,
)
from pi_context.resources.skills import (
    SkillsResult,
    expand_skill_command,
    load_skill_from_file,
    load_skills,
    load_skills_from_dir,
)
from pi_context.resources.trust import (
    TrustDecision,
    TrustStore,
    project_needs_trust,
    resolve_project_trust,
)
from pi_context.resources.types import ContextFile, Diagnostic, Skill, SkillSourceInfo

__all__ = [
    "AGENT_DIR_ENV",
    "CONTEXT_FILE_NAMES",
    "BranchSummarySettings",
    "CompactionSettings",
    "ContextFile",
    "Diagnostic",
    "FrontmatterError",
    "LoadedResources",
    "ResourceLoader",
    "RetrySettings",
    "Settings",
    "Skill",
    "SkillSourceInfo",
    "SkillsResult",
    "TrustDecision",
    "TrustStore",
    "agent_dir",
    "branch_summary_settings_for",
    "compaction_settings_for",
    "deep_merge_settings",
    "expand_home",
    "expand_skill_command",
    "find_shadowed_context_file",
    "home_dir",
    "load_context_file_from_dir",
    "load_context_files",
    "load_settings",
    "load_skill_from_file",
    "load_skills",
    "load_skills_from_dir",
    "parse_frontmatter",
    "project_needs_trust",
    "resolve_project_trust",
    "resolve_prompt_input",
    "retry_settings_for",
    "strip_frontmatter",
]
