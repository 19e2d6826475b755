"""Conformance checks for the system prompt and resources against pi 1.6.0's goldens.

Each ``check_*`` returns a list of mismatch descriptions (empty = conformant).

pi-context writes its own preamble, closing rules, docs pointer and skills hints. To still compare
every structural byte, the checks build a :class:`PromptWording` from pi's own sentences *as
found in the goldens* and compare byte for byte with it; a second pass with our default wording
checks that everything but those sentences is identical (documented in docs/compatibility.md).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pi_context.errors import PromptError
from pi_context.prompt import (
    DEFAULT_WORDING,
    PromptWording,
    SystemPromptOptions,
    build_sections,
    build_system_prompt,
    format_skills_for_prompt,
    get_current_system_message,
    get_current_system_prompt,
    get_current_tools,
)
from pi_context.prompt.replay import (
    diff_sections,
    get_system_message_text,
    render_system_message_update,
)
from pi_context.prompt.sections import SkillReader, build_system_prompt_state
from pi_context.resources import ResourceLoader, Skill, load_context_files, load_skills
from pi_context.resources.skills import load_skills_from_dir
from pi_context.tokens import estimate_tokens
from tests.conformance import registry
from tests.conformance.digests import text_matches

registry.claim(
    "system_prompt",
    "docsPaths",
    "shared",
    "notes",
    "cases",
    "skillsInput",
    "manual",
)
registry.claim("resources", "tree", "cases", "loadSkillsFromDir", "loadSkills")
registry.claim("session.target", "currentSystem")

# Sections whose text is our own wording (compared through the pi-wording pass only).
WORDING_SECTIONS = frozenset({"preamble", "rules", "docs", "skills"})


def _inner(text: str, name: str) -> str:
    head, tail = f"<{name}>\n", f"\n</{name}>"
    assert text.startswith(head), (name, text[:40])
    assert text.endswith(tail), (name, text[-40:])
    return text[len(head) : -len(tail)]


def _bullets(text: str, name: str = "rules") -> list[str]:
    return [line[2:] for line in _inner(text, name).split("\n")]


def pi_wording(grid: Mapping[str, Any]) -> PromptWording:
    """pi 1.6.0's own sentences, read from the grid golden (never stored in our code)."""
    cases = grid["cases"]
    minimal = cases["minimal"]["sections"]
    bash_rule, concise, paths = _bullets(minimal["rules"])
    skills_read = _inner(cases["skills_read"]["sections"]["skills"], "skills").split("\n")
    skills_bash = _inner(cases["skills_bash_only"]["sections"]["skills"], "skills").split("\n")
    skills_ind = _inner(cases["skills_indirect"]["sections"]["skills"], "skills").split("\n")
    return PromptWording(
        preamble=minimal["preamble"],
        rule_shell_bash=bash_rule,
        rule_shell_powershell=_bullets(cases["tools_powershell"]["sections"]["rules"])[0],
        rule_shell_both=_bullets(cases["tools_bash_and_powershell"]["sections"]["rules"])[0],
        rule_concise=concise,
        rule_paths=paths,
        docs=_inner(minimal["docs"], "docs"),
        skills_intro=skills_read[0],
        skills_load_read=skills_read[1],
        skills_load_bash=skills_bash[1],
        skills_load_indirect=skills_ind[1],
        skills_paths=skills_read[2],
    )


def resolve_refs(grid: Mapping[str, Any], value: Any) -> Any:
    """Resolve ``"$NAME"`` / ``"$SKILLS[i]"`` references of grid inputs."""
    shared = grid["shared"]
    if isinstance(value, str) and value.startswith("$"):
        if "[" in value:
            name, idx = value[1:-1].split("[")
            return shared[name][int(idx)]
        return shared[value[1:]]
    if isinstance(value, list):
        return [resolve_refs(grid, v) for v in value]
    if isinstance(value, dict):
        return {k: resolve_refs(grid, v) for k, v in value.items()}
    return value


def _text_ok(expected: Any, text: str) -> bool:
    return text_matches(expected, text)


# ----------------------------------------------------------------------------- grid


def _expect_error(
    out: list[str], where: str, expected: Mapping[str, Any], fn: Callable[[], Any]
) -> None:
    try:
        fn()
    except PromptError as exc:
        if str(exc) != expected["error"]["message"]:
            out.append(f"{where}: error {exc!s} != {expected['error']['message']}")
        return
    out.append(f"{where}: expected error {expected['error']['message']}")


def check_grid_case(grid: Mapping[str, Any], name: str) -> list[str]:
    case = grid["cases"][name]
    wording = pi_wording(grid)
    raw = resolve_refs(grid, case["input"])
    options = SystemPromptOptions.from_json(raw, wording=wording)
    out: list[str] = []
    if "error" in case["sections"]:
        _expect_error(out, f"{name}.sections", case["sections"], lambda: build_sections(options))
        _expect_error(
            out, f"{name}.state", case["state"], lambda: build_system_prompt_state(options)
        )
        _expect_error(out, f"{name}.prompt", case["prompt"], lambda: build_system_prompt(options))
        return out
    sections = build_sections(options)
    if list(sections) != case["sectionOrder"]:
        out.append(f"{name}: order {list(sections)} != {case['sectionOrder']}")
    for key, text in case["sections"].items():
        if sections.get(key) != text:
            out.append(f"{name}.sections.{key}: {sections.get(key)!r} != {text!r}")
    state = build_system_prompt_state(options)
    exp_state = case["state"]
    if state["content"] != exp_state["content"]:
        out.append(f"{name}.state.content")
    if ("sections" in state) != exp_state["hasSections"]:
        out.append(f"{name}.state.hasSections")
    if exp_state["sectionsEqualBuildSections"] is not None and (
        (state.get("sections") == sections) != exp_state["sectionsEqualBuildSections"]
    ):
        out.append(f"{name}.state.sectionsEqualBuildSections")
    prompt = build_system_prompt(options)
    if _text_ok(case["prompt"], prompt):
        pass
    elif options.force_system_prompt is None and "docs" in case["sections"]:
        # pi hashed the text before scrubbing its install path out of <docs>: compare with the
        # golden's own (scrubbed) sections joined as pi joins them instead.
        expected_text = "\n\n".join(t for t in case["sections"].values() if t)
        if prompt != expected_text:
            out.append(f"{name}.prompt differs")
    else:
        out.append(f"{name}.prompt differs")
    if "normalized" in case and options.to_json() != case["normalized"]:
        out.append(f"{name}.normalized: {options.to_json()} != {case['normalized']}")
    # Our own wording: identical structure, identical non-wording sections.
    ours = build_sections(SystemPromptOptions.from_json(raw, wording=DEFAULT_WORDING))
    if list(ours) != case["sectionOrder"]:
        out.append(f"{name}: own-wording order {list(ours)}")
    for key, text in case["sections"].items():
        if key not in WORDING_SECTIONS and ours.get(key) != text:
            out.append(f"{name}: own-wording section {key} differs")
    return out


def check_format_skills(golden: Mapping[str, Any], grid: Mapping[str, Any]) -> list[str]:
    wording = pi_wording(grid)
    by_name = {s["name"]: Skill.from_json(s) for s in golden["skillsInput"]}
    out = []
    for name, case in golden["cases"].items():
        skills = [by_name[n] for n in case["skills"]]
        readers: tuple[SkillReader | None, ...] = (None, "read", "bash", "indirect")
        for skill_reader in readers:
            reader = skill_reader or "default"
            got = format_skills_for_prompt(skills, skill_reader, wording)
            if got != case[reader]:
                out.append(f"format_skills.{name}.{reader}: {got!r} != {case[reader]!r}")
    return out


def check_diff(golden: Mapping[str, Any], grid: Mapping[str, Any]) -> list[str]:
    out = []
    for i, case in enumerate(golden["cases"]):
        prev = grid["cases"][case["previous"]]["sections"]
        cur = grid["cases"][case["current"]]["sections"]
        got = diff_sections(prev, cur)
        if got != case["patch"] or (got and list(got) != list(case["patch"])):
            out.append(f"diff[{i}] {case['previous']}->{case['current']}: {got!r}")
    for i, case in enumerate(golden["manual"]):
        previous = {k: v for k, v in case["previous"].items() if v is not None}
        # pi's previous never holds nulls in practice; a null there behaves as "present".
        previous.update({k: "" for k, v in case["previous"].items() if v is None})
        got = diff_sections(previous, case["current"])
        if got != case["patch"] or (got and list(got) != list(case["patch"])):
            out.append(f"manual[{i}]: {got!r} != {case['patch']!r}")
    return out


def check_replay(golden: Mapping[str, Any]) -> list[str]:
    out = []
    for name, case in golden["cases"].items():
        messages = case["messages"]
        current = get_current_system_message(messages)
        if current != case["current"] or (current and list(current) != list(case["current"])):
            out.append(f"replay.{name}.current: {current!r}")
        text = None if current is None else get_system_message_text(current)
        if text != case["currentText"]:
            out.append(f"replay.{name}.currentText: {text!r}")
        if get_current_system_prompt(messages) != case["currentPrompt"]:
            out.append(f"replay.{name}.currentPrompt")
        if list(get_current_tools(messages)) != case["currentTools"]:
            out.append(f"replay.{name}.currentTools")
        updates = [render_system_message_update(m) for m in messages if m["role"] == "system"]
        if updates != case["updates"]:
            out.append(f"replay.{name}.updates: {updates!r}")
        tokens = None if current is None else estimate_tokens(current)
        if tokens != case["estimateTokens"]:
            out.append(f"replay.{name}.estimateTokens: {tokens} != {case['estimateTokens']}")
    return out


# ----------------------------------------------------------------------------- resources


class Tree:
    """A golden's directory tree materialized under ``base`` with pi's ``<TREE>`` scrubbing."""

    def __init__(self, golden: Mapping[str, Any], base: Path):
        tree = golden["tree"]
        self.base = base.resolve()
        rel_root = tree["root"].removeprefix("<TREE>/")
        self.root = self.base / rel_root
        self._materialize(tree["spec"])

    def _materialize(self, spec: Mapping[str, Any]) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        items = sorted(spec.items(), key=lambda kv: isinstance(kv[1], dict) and "symlink" in kv[1])
        for rel, content in items:
            path = self.root / rel
            if isinstance(content, str):
                path.parent.mkdir(parents=True, exist_ok=True)
                with open(path, "w", encoding="utf-8", newline="") as f:
                    f.write(content)
            elif content.get("dir"):
                path.mkdir(parents=True, exist_ok=True)
            elif content.get("symlink"):
                path.parent.mkdir(parents=True, exist_ok=True)
                os.symlink(content["symlink"], path)

    def path(self, rel: str) -> str:
        return str(self.root / rel)

    def scrub(self, value: Any) -> Any:
        prefix = str(self.base)
        if isinstance(value, str):
            return value.replace(prefix, "<TREE>")
        if isinstance(value, list):
            return [self.scrub(v) for v in value]
        if isinstance(value, dict):
            return {self.scrub(k): self.scrub(v) for k, v in value.items()}
        return value

    def inside(self, path: str) -> bool:
        return path.startswith(str(self.base) + os.sep)


def _diag_json(diags: list[Any]) -> list[dict[str, Any]]:
    return [d.to_json() for d in diags]


def _diags_match(expected: list[dict[str, Any]], got: list[dict[str, Any]]) -> bool:
    """YAML parser messages differ between libraries: compare type and path for those."""
    if len(expected) != len(got):
        return False
    for e, g in zip(expected, got, strict=True):
        if e == g:
            continue
        yaml_error = e["type"] == "warning" and (
            " at line " in e["message"] or "\n" in e["message"]
        )
        if not (yaml_error and e.get("path") == g.get("path") and e["type"] == g["type"]):
            return False
    return True


def check_context_files(golden: Mapping[str, Any], base: Path) -> list[str]:
    tree = Tree(golden, base)
    out = []
    for case in golden["cases"]:
        files = load_context_files(tree.path(case["cwd"]), tree.path(case["agentDir"]))
        kept = [f for f in files if tree.inside(f.path)]
        got = tree.scrub([f.to_json() for f in kept])
        if got != case["files"]:
            out.append(f"context_files.{case['name']}: {got!r}")
        if len(files) - len(kept) != case["droppedOutsideTree"]:
            out.append(f"context_files.{case['name']}: dropped {len(files) - len(kept)}")
    return out


def _skills_json(tree: Tree, skills: list[Skill]) -> tuple[list[Any], int]:
    kept = [s for s in skills if tree.inside(s.file_path)]
    return tree.scrub([s.to_json() for s in kept]), len(skills) - len(kept)


def check_skills(golden: Mapping[str, Any], base: Path) -> list[str]:
    tree = Tree(golden, base)
    out = []
    for name, case in golden["loadSkillsFromDir"].items():
        result = load_skills_from_dir(tree.path(case["dir"]), case["source"])
        skills, dropped = _skills_json(tree, result.skills)
        if skills != case["skills"]:
            out.append(f"loadSkillsFromDir.{name}.skills: {skills!r}")
        if not _diags_match(case["diagnostics"], tree.scrub(_diag_json(result.diagnostics))):
            out.append(f"loadSkillsFromDir.{name}.diagnostics: {_diag_json(result.diagnostics)}")
        if dropped != case["droppedOutsideTree"]:
            out.append(f"loadSkillsFromDir.{name}.droppedOutsideTree")
    for case in golden["loadSkills"]:
        name = case["name"]
        res = load_skills(
            tree.path(case["cwd"]),
            tree.path(case["agentDir"]),
            skill_paths=case["skillPaths"],
            include_defaults=case["includeDefaults"],
        )
        skills, dropped = _skills_json(tree, res.skills)
        if skills != case["skills"]:
            out.append(f"loadSkills.{name}.skills: {skills!r}")
        if not _diags_match(case["diagnostics"], tree.scrub(_diag_json(res.diagnostics))):
            out.append(f"loadSkills.{name}.diagnostics: {tree.scrub(_diag_json(res.diagnostics))}")
        if dropped != case["droppedOutsideTree"]:
            out.append(f"loadSkills.{name}.droppedOutsideTree")
        prompt = tree.scrub(format_skills_for_prompt(res.skills, "read", _PI_WORDING()))
        if prompt != case["promptRead"]:
            out.append(f"loadSkills.{name}.promptRead: {prompt!r}")
    return out


_wording_cache: list[PromptWording] = []


def _PI_WORDING() -> PromptWording:
    """pi's sentences, read from the grid golden (the repository's copy when the folder under
    test has no grid: the sentences are the same in every folder)."""
    if not _wording_cache:
        path = registry.find_golden("system_prompt/grid") or (
            registry.REPO_COPY / "goldens" / "system_prompt" / "grid.json"
        )
        _wording_cache.append(pi_wording(registry.load_golden(path)))
    return _wording_cache[0]


def check_resource_loader(golden: Mapping[str, Any], base: Path) -> list[str]:
    tree = Tree(golden, base)
    spec = golden["tree"]
    home = tree.path(spec["home"])
    agent = tree.path(spec["agentDir"])
    out = []
    for case in golden["cases"]:
        name = case["name"]
        cwd = tree.path(case["cwd"])
        system_prompt = None
        append: list[str] | None = None
        if (
            "systemPromptSource" in case
            and case["systemPromptSource"] is None
            and case.get("systemPrompt")
        ):
            system_prompt = case["systemPrompt"]
        sources = [
            s["path"].replace("<TREE>", str(tree.base))
            for s in case.get("appendSystemPromptSources", [])
        ]
        if case.get("systemPromptSource") is None and "systemPrompt" in case:
            # explicit CLI-style inputs: literal texts, or the files named as sources
            append = []
            for text in case["appendSystemPrompt"]:
                match = next(
                    (p for p in sources if Path(p).read_text(encoding="utf-8") == text), None
                )
                append.append(match if match is not None else text)
        loader = ResourceLoader(
            cwd,
            agent_dir=agent,
            home=home,
            trusted=case.get("projectTrusted", True),
            no_context_files=case.get("noContextFiles", False),
            no_skills=case.get("noSkills", False),
            skill_paths=case.get("additionalSkillPaths", ()),
            system_prompt=system_prompt,
            append_system_prompt=append,
        )
        res = loader.load()
        skills, dropped = _skills_json(tree, res.skills)
        if skills != case["skills"]:
            out.append(f"loader.{name}.skills: {skills!r}")
        if dropped != case["droppedOutsideTree"]:
            out.append(f"loader.{name}.droppedOutsideTree: {dropped}")
        diags = tree.scrub(_diag_json(res.diagnostics))
        if not _diags_match(case["diagnostics"], diags):
            out.append(f"loader.{name}.diagnostics: {diags}")
        files = [f for f in res.context_files if tree.inside(f.path)]
        if tree.scrub([f.to_json() for f in files]) != case["agentsFiles"]:
            out.append(f"loader.{name}.agentsFiles")
        if len(res.context_files) - len(files) != case["agentsFilesDroppedOutsideTree"]:
            out.append(f"loader.{name}.agentsFilesDroppedOutsideTree")
        if res.system_prompt != case["systemPrompt"]:
            out.append(f"loader.{name}.systemPrompt: {res.system_prompt!r}")
        source = None if res.system_prompt_source is None else {"path": res.system_prompt_source}
        if tree.scrub(source) != case["systemPromptSource"]:
            out.append(f"loader.{name}.systemPromptSource: {source}")
        if res.append_system_prompt != case["appendSystemPrompt"]:
            out.append(f"loader.{name}.appendSystemPrompt: {res.append_system_prompt!r}")
        got_sources = [{"path": p} for p in res.append_system_prompt_sources]
        if tree.scrub(got_sources) != case["appendSystemPromptSources"]:
            out.append(f"loader.{name}.appendSystemPromptSources: {got_sources}")
        if case["extensionErrors"] != []:
            out.append(f"loader.{name}: extension errors are not modelled")
        options = SystemPromptOptions(
            cwd=res.cwd,
            custom_prompt=res.system_prompt,
            append_system_prompt=res.append_text,
            context_files=tuple(files),
            skills=tuple(s for s in res.skills if tree.inside(s.file_path)),
            wording=_PI_WORDING(),
        )
        sections = tree.scrub(build_sections(options))
        if sections != case["promptSections"] or list(sections) != list(case["promptSections"]):
            out.append(f"loader.{name}.promptSections: {sections!r}")
    return out


# ----------------------------------------------------------------------------- sessions


def session_messages(golden: Mapping[str, Any], target: Mapping[str, Any]) -> list[Any] | None:
    """The target's projected messages from its message rows (``None`` for digest goldens)."""
    rows = target.get("messages")
    if not isinstance(rows, list):
        return None
    root = registry.conformance_dir()
    entries = _read_entries(root / golden["input"]["file"])
    by_id: dict[str, Any] = {}
    for e in entries:
        if isinstance(e, dict) and e.get("type") != "session" and "id" in e:
            by_id[e["id"]] = e
    store = golden.get("store", {}).get("messages", {})
    out = []
    for src, _role, _tokens, ref in rows:
        if ref == "=":
            if golden.get("idsAreIndexRefs") and isinstance(src, str) and src.startswith("#"):
                out.append(entries[int(src[1:])]["message"])
            else:
                out.append(by_id[src]["message"])
        else:
            out.append(store[ref[2:]])
    return out


def _read_entries(path: Path) -> list[Any]:
    from pi_context._json import loads

    out = []
    for line in path.read_bytes().split(b"\n"):
        if not line.strip():
            continue
        try:
            out.append(loads(line))
        except ValueError:
            continue
    return out


def _engine_messages(golden: Mapping[str, Any], target: Mapping[str, Any]) -> list[Any]:
    """Digest-level goldens do not inline messages: project the session with our engine."""
    from pi_context.session.projection import projection_of_path
    from tests.conformance.compaction_checks import LoadedSession

    s = LoadedSession(dict(golden), registry.conformance_dir())
    leaf = s.get(target["leaf"])
    if leaf is None and target["leaf"] is not None and s.entries:
        leaf = s.entries[-1]  # pi falls back to the last entry for an unknown id
    path = s.tree.path(leaf) if leaf is not None else []
    return list(projection_of_path(path).messages)


def check_current_system(golden: Mapping[str, Any], target: Mapping[str, Any]) -> list[str]:
    expected = target.get("currentSystem", "absent")
    if expected == "absent":
        return []
    messages = session_messages(golden, target)
    if messages is None:
        messages = _engine_messages(golden, target)
    current = get_current_system_message(messages)
    where = f"{golden['case']}@{target['leaf']}"
    if expected is None:
        return [] if current is None else [f"{where}: expected no system state"]
    if current is None:
        return [f"{where}: no system state"]
    out = []
    content = current["content"] if isinstance(current["content"], str) else ""
    if "content" in expected and not _text_ok(expected["content"], content):
        out.append(f"{where}.content")
    names = list(current.get("sections", {}))
    if "sectionNames" in expected and names != expected["sectionNames"]:
        out.append(f"{where}.sectionNames {names}")
    tools = [t["name"] for t in current.get("toolsAdded", [])]
    if "toolNames" in expected and tools != expected["toolNames"]:
        out.append(f"{where}.toolNames")
    if "text" in expected and not _text_ok(expected["text"], get_system_message_text(current)):
        out.append(f"{where}.text")
    tokens = estimate_tokens(current)
    if "estimateTokens" in expected and tokens != expected["estimateTokens"]:
        out.append(f"{where}.estimateTokens {tokens}")
    if "timestamp" in expected and current["timestamp"] != expected["timestamp"]:
        out.append(f"{where}.timestamp")
    return out
