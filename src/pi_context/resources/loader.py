"""``ResourceLoader``: everything that feeds the system prompt, gathered in one pass.

Trust first (it decides what else may be read), then settings, context files, the custom
prompt (``SYSTEM.md``), the addendum (``APPEND_SYSTEM.md``), skills and prompt templates (with
those of the packages pi installed), every problem collected
as a :class:`~pi_context.resources.types.Diagnostic` rather than raised. Only a broken settings
or trust file raises (:class:`~pi_context.errors.SettingsError`), because silently ignoring it
would change behaviour the user configured.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pi_context._keywords import keyword_checked
from pi_context.resources.context_files import load_context_files, read_text_file
from pi_context.resources.packages import PackageResources, resolve_packages
from pi_context.resources.paths import agent_dir as default_agent_dir
from pi_context.resources.paths import ancestors, expand_home, find_git_root, home_dir
from pi_context.resources.prompt_templates import PromptTemplate, load_prompt_templates
from pi_context.resources.resource_patterns import (
    apply_patterns,
    enabled_by_overrides,
    is_pattern,
    settings_entries,
)
from pi_context.resources.settings import Settings, load_settings
from pi_context.resources.skills import (
    ScanMode,
    SkillsResult,
    collect_skill_entries,
    dedupe_skills,
    load_explicit_skill_path,
    source_info_for,
)
from pi_context.resources.trust import (
    TRUST_FILE_NAME,
    TrustDecision,
    TrustStore,
    resolve_project_trust,
)
from pi_context.resources.types import ContextFile, Diagnostic, Skill, SkillSourceInfo

__all__ = ["LoadedResources", "ResourceLoader", "resolve_prompt_input"]


@dataclass(slots=True)
class LoadedResources:
    """The result of one load (``/reload`` is simply another load)."""

    cwd: str
    agent_dir: str
    trust: TrustDecision
    settings: Settings
    context_files: list[ContextFile] = field(default_factory=list)
    skills: list[Skill] = field(default_factory=list)
    prompt_templates: list[PromptTemplate] = field(default_factory=list)
    prompt_template_diagnostics: list[Diagnostic] = field(default_factory=list)
    """The prompt templates' problems (also in :attr:`diagnostics`)."""
    diagnostics: list[Diagnostic] = field(default_factory=list)
    packages: PackageResources = field(default_factory=PackageResources)
    """What the installed packages ship; their own problems (not installed, extensions pictx
    cannot load) are in ``packages.diagnostics`` (and in :attr:`diagnostics`)."""
    system_prompt: str | None = None
    system_prompt_source: str | None = None
    append_system_prompt: list[str] = field(default_factory=list)
    append_system_prompt_sources: list[str] = field(default_factory=list)

    @property
    def trusted(self) -> bool:
        return self.trust.trusted

    @property
    def append_text(self) -> str:
        """The addendum: every append source joined with a blank line."""
        return "\n\n".join(self.append_system_prompt)


def resolve_prompt_input(
    source: str, base: str, diagnostics: list[Diagnostic]
) -> tuple[str, str | None]:
    """``(text, file path or None)``: the file's content when ``source`` names a file,
    otherwise ``source`` itself as literal text."""
    path = os.path.join(base, expand_home(source))
    if os.path.isfile(path):
        try:
            return read_text_file(path, diagnostics), os.path.abspath(path)
        except (OSError, ValueError) as exc:
            diagnostics.append(Diagnostic("warning", f"Could not read {path}: {exc}", path))
    return source, None


@keyword_checked
class ResourceLoader:
    """Loads context files, SYSTEM/APPEND_SYSTEM, skills, prompt templates and settings for one
    directory.

    ``trusted=None`` decides trust as pi does non-interactively (saved decision in
    ``<agentDir>/trust.json``, else trusted when the project has nothing that needs trust, else
    ``defaultProjectTrust`` with ``ask`` meaning no). ``system_prompt``/``append_system_prompt``
    replace discovery (text or file path each), like pi's CLI flags.
    """

    def __init__(
        self,
        cwd: str | os.PathLike[str] | None = None,
        *,
        agent_dir: str | os.PathLike[str] | None = None,
        home: str | os.PathLike[str] | None = None,
        trusted: bool | None = None,
        no_context_files: bool = False,
        no_skills: bool = False,
        skill_paths: Sequence[str] = (),
        prompt_template_paths: Sequence[str] = (),
        no_prompt_templates: bool = False,
        system_prompt: str | None = None,
        append_system_prompt: Sequence[str] | None = None,
    ):
        self.cwd = os.path.abspath(os.fspath(cwd) if cwd is not None else os.getcwd())
        self.agent_dir = os.path.abspath(
            os.fspath(agent_dir) if agent_dir is not None else default_agent_dir()
        )
        self.home = os.path.abspath(os.fspath(home) if home is not None else home_dir())
        self.trusted = trusted
        self.no_context_files = no_context_files
        self.no_skills = no_skills
        self.skill_paths = tuple(skill_paths)
        self.prompt_template_paths = tuple(prompt_template_paths)
        self.no_prompt_templates = no_prompt_templates
        self.system_prompt = system_prompt
        self.append_system_prompt = (
            None if append_system_prompt is None else tuple(append_system_prompt)
        )

    @property
    def trust_store(self) -> TrustStore:
        return TrustStore(Path(self.agent_dir) / TRUST_FILE_NAME)

    def load(self) -> LoadedResources:
        """Read everything from disk (the first load of a session)."""
        return self._load()

    def reload(self) -> LoadedResources:
        """``/reload``: read everything again, deciding trust again.

        pi records a project as trusted when it had nothing needing trust at start and has
        some now (files the model may have written during the session). Here nothing is ever
        recorded: such a project is decided as any other (saved decision, else
        ``defaultProjectTrust``), so its new ``.pi`` files stay unused until the user trusts
        it (``pictx trust``, ``/trust``).
        """
        return self._load()

    def _load(self) -> LoadedResources:
        global_settings = load_settings(self.agent_dir, None)
        if self.trusted is not None:
            trust = TrustDecision(self.trusted, "override")
        else:
            trust = resolve_project_trust(
                self.cwd,
                self.trust_store,
                default=global_settings.default_project_trust,
                home=self.home,
            )
        settings = load_settings(self.agent_dir, self.cwd, trusted=trust.trusted)
        res = LoadedResources(self.cwd, self.agent_dir, trust, settings)
        if not self.no_context_files:
            res.context_files = load_context_files(
                self.cwd, self.agent_dir, diagnostics=res.diagnostics
            )
        res.packages = resolve_packages(
            cwd=self.cwd,
            agent_dir=self.agent_dir,
            global_settings=res.settings.global_data,
            project_settings=res.settings.project_data,
            trusted=res.trusted,
        )
        res.diagnostics += res.packages.diagnostics
        self._load_prompts(res)
        self._load_skills(res)
        res.prompt_templates, found = load_prompt_templates(
            cwd=self.cwd,
            agent_dir=self.agent_dir,
            trusted=res.trusted,
            settings={"project": res.settings.project_data, "user": res.settings.global_data},
            paths=self.prompt_template_paths,
            no_defaults=self.no_prompt_templates,
            package_files=res.packages.prompts,
        )
        res.prompt_template_diagnostics = found
        res.diagnostics += found
        return res

    # ------------------------------------------------------------------ prompts

    def _discover(self, name: str, trusted: bool) -> str | None:
        project = os.path.join(self.cwd, ".pi", name)
        if trusted and os.path.isfile(project):
            return project
        global_file = os.path.join(self.agent_dir, name)
        return global_file if os.path.isfile(global_file) else None

    def _load_prompts(self, res: LoadedResources) -> None:
        if self.system_prompt is not None:
            res.system_prompt, res.system_prompt_source = resolve_prompt_input(
                self.system_prompt, self.cwd, res.diagnostics
            )
        else:
            found = self._discover("SYSTEM.md", res.trusted)
            if found is not None:
                res.system_prompt, res.system_prompt_source = resolve_prompt_input(
                    found, self.cwd, res.diagnostics
                )
        sources: Sequence[str]
        if self.append_system_prompt is not None:
            sources = self.append_system_prompt
        else:
            found = self._discover("APPEND_SYSTEM.md", res.trusted)
            sources = [found] if found is not None else []
        for source in sources:
            text, path = resolve_prompt_input(source, self.cwd, res.diagnostics)
            res.append_system_prompt.append(text)
            if path is not None:
                res.append_system_prompt_sources.append(path)

    # ------------------------------------------------------------------ skills

    def _roots(self, res: LoadedResources) -> list[tuple[str, ScanMode, str, str, str]]:
        """``(dir, mode, source, scope, sourceInfo.baseDir)`` in pi's discovery order."""
        roots: list[tuple[str, ScanMode, str, str, str]] = []
        for base, settings_data in (
            (os.path.join(self.cwd, ".pi"), res.settings.project_data),
            (self.agent_dir, res.settings.global_data),
        ):
            entries = settings_data.get("skills")
            if isinstance(entries, list):
                scope = "project" if base != self.agent_dir else "user"
                for entry in entries:
                    if isinstance(entry, str) and entry and not is_pattern(entry):
                        path = os.path.join(base, expand_home(entry.strip()))
                        roots.append((path, "pi", "local", scope, base))
        if res.trusted:
            pi_dir = os.path.join(self.cwd, ".pi")
            roots.append((os.path.join(pi_dir, "skills"), "pi", "auto", "project", pi_dir))
            home_agents = os.path.join(self.home, ".agents", "skills")
            git_root = find_git_root(self.cwd)
            for directory in ancestors(self.cwd):
                agents = os.path.join(directory, ".agents")
                skills_dir = os.path.join(agents, "skills")
                if skills_dir != home_agents:
                    roots.append((skills_dir, "agents", "auto", "project", agents))
                if directory == git_root:
                    break
        roots.append((os.path.join(self.agent_dir, "skills"), "pi", "auto", "user", self.agent_dir))
        home_agents_dir = os.path.join(self.home, ".agents")
        roots.append(
            (os.path.join(home_agents_dir, "skills"), "agents", "auto", "user", home_agents_dir)
        )
        return roots

    def _load_skills(self, res: LoadedResources) -> None:
        collected = SkillsResult()
        seen_files: set[str] = set()
        entries = {
            "project": settings_entries(res.settings.project_data, "skills"),
            "user": settings_entries(res.settings.global_data, "skills"),
        }
        if not self.no_skills:
            for root, mode, source, scope, info_base in self._roots(res):
                files = (
                    collect_skill_entries(root, mode, collected.diagnostics)
                    if os.path.isdir(root)
                    else ([root] if root.endswith(".md") and os.path.isfile(root) else [])
                )
                own = entries.get(scope, [])
                if source == "local":  # the settings' globs, !, + and - entries
                    kept = apply_patterns(files, [e for e in own if is_pattern(e)], info_base)
                    files = [f for f in files if f in kept]
                elif own:
                    files = [f for f in files if enabled_by_overrides(f, own, info_base)]
                info = source_info_for(source, scope, info_base)
                for path in files:
                    key = os.path.realpath(path)
                    if key not in seen_files:
                        seen_files.add(key)
                        collected.add_file(path, info)
            for path, package_info in res.packages.skills:  # packages rank after the rest
                key = os.path.realpath(path)
                if key not in seen_files:
                    seen_files.add(key)
                    collected.add_file(path, _fixed(package_info))
        temporary = source_info_for("local", "temporary")
        for raw in self.skill_paths:
            load_explicit_skill_path(raw, self.cwd, temporary, collected)
        res.diagnostics += collected.diagnostics
        res.skills = dedupe_skills(collected.skills, res.diagnostics)


def _fixed(info: SkillSourceInfo) -> Callable[[str], SkillSourceInfo]:
    """A source-info factory giving every file the same (already complete) record."""
    return lambda _path: info
