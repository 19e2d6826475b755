from .context_files import load_context_files as load_context_files
from .loader import LoadedResources as LoadedResources
from .loader import ResourceLoader as ResourceLoader
from .paths import agent_dir as agent_dir
from .prompt_templates import PromptTemplate as PromptTemplate
from .settings import BranchSummarySettings as BranchSummarySettings
from .settings import CompactionSettings as CompactionSettings
from .settings import RetrySettings as RetrySettings
from .settings import Settings as Settings
from .settings import branch_summary_settings_for as branch_summary_settings_for
from .settings import compaction_settings_for as compaction_settings_for
from .settings import load_settings as load_settings
from .settings import retry_settings_for as retry_settings_for
from .skills import SkillsResult as SkillsResult
from .skills import expand_skill_command as expand_skill_command
from .skills import load_skills as load_skills
from .trust import TrustDecision as TrustDecision
from .trust import TrustStore as TrustStore
from .trust import resolve_project_trust as resolve_project_trust
from .types import ContextFile as ContextFile
from .types import Diagnostic as Diagnostic
from .types import Skill as Skill

__all__: list[str]  # the names above, in ruff's order (_lazy.attach_stub)
