"""Packages pi installed: the skills, prompt templates and themes they ship.

A ``packages`` entry of ``settings.json`` (the project's, once the project is trusted, then the
user's) is a source string or an object ``{"source": ..., "skills": [...], "prompts": [...],
"extensions": [...], "themes": [...], "autoload": false}``. The source is

- ``npm:<name>[@<version>]``: installed by pi under ``<agentDir>/npm/node_modules/<name>``
  (user) or ``<cwd>/.pi/npm/node_modules/<name>`` (project);
- ``git:<host>/<path>[@<ref>]`` (or an ``https://``, ``ssh://``, ``git://`` URL, or
  ``git@host:path``): cloned by pi under ``<agentDir>/git/<host>/<path>`` or
  ``<cwd>/.pi/git/<host>/<path>``;
- anything else: a local directory, relative to the folder of the settings file that names it.

The same package named twice (npm by name, git by host and path, local by resolved path) loads
once; the project's entry replaces the user's, except that a project entry with
``"autoload": false`` only switches single resources of the user's entry on or off.

What a package offers: the paths of its ``package.json`` ``pi`` manifest (globs, ``!pattern``,
``+path``, ``-path``), else its ``skills/``, ``prompts/``, ``themes/`` and ``extensions/``
folders. A settings entry's own lists narrow that (``[]`` loads none of a kind). pictx installs
nothing: a package that is not on disk is reported once, with the pi command that installs it; a
package's TypeScript/JavaScript extensions are reported once as not loadable. Package resources
rank after every local and auto-discovered one, so a name collision is lost by the package.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal
from urllib.parse import urlsplit

import orjson
from msgspec import Struct, field

from pi_context.resources.paths import expand_home
from pi_context.resources.resource_patterns import (
    apply_patterns,
    is_override,
    matches_exact,
    matches_glob,
)
from pi_context.resources.skills import collect_skill_entries
from pi_context.resources.types import Diagnostic, SkillSourceInfo

__all__ = [
    "PackageResources",
    "PackageSource",
    "parse_package_source",
    "resolve_packages",
]

ResourceKind = Literal["extensions", "skills", "prompts", "themes"]
_KINDS: tuple[ResourceKind, ...] = ("extensions", "skills", "prompts", "themes")
_SUFFIXES: dict[ResourceKind, tuple[str, ...]] = {
    "extensions": (".ts", ".js"),
    "skills": (".md",),
    "prompts": (".md",),
    "themes": (".json",),
}
_NOT_LOCAL = ("npm:", "git:", "github:", "http:", "https:", "ssh:", "builtin:")
_PROTOCOL = re.compile(r"^(https?|ssh|git)://", re.IGNORECASE)
_SCP = re.compile(r"^git@([^:]+):(.+)$")


class PackageSource(Struct, frozen=True):
    """One parsed ``packages`` source: ``kind`` with the fields that kind uses."""

    raw: str
    kind: Literal["npm", "git", "local"]
    name: str = ""
    """npm: the package name (no version)."""
    host: str = ""
    path: str = ""
    """git: the repository path on ``host``; local: the path as written."""
    ref: str | None = None
    """git: the ``@ref`` pinned, if any."""

    def identity(self, base_dir: str) -> str:
        """What makes two entries the same package."""
        if self.kind == "npm":
            return f"npm:{self.name}"
        if self.kind == "git":
            return f"git:{self.host}/{self.path}"
        return "local:" + os.path.realpath(_resolve(self.path, base_dir))

    def install_dir(self, scope: str, cwd: str, agent_dir: str) -> str:
        """Where pi keeps this package (a local one: the folder itself)."""
        base = os.path.join(cwd, ".pi") if scope == "project" else agent_dir
        if self.kind == "npm":
            return os.path.join(base, "npm", "node_modules", *self.name.split("/"))
        if self.kind == "git":
            return os.path.join(base, "git", self.host, *self.path.split("/"))
        return _resolve(self.path, base)


def _resolve(path: str, base: str) -> str:
    path = path.strip()
    if path.startswith("file://"):
        path = path[len("file://") :]
    return os.path.normpath(os.path.join(base, expand_home(path)))


def _split_ref(url: str) -> tuple[str, str | None]:
    """``(repository, ref)``: a ``@ref`` after the repository path, as pi splits it."""
    scp = _SCP.match(url)
    if scp is not None:
        repo_path, at, ref = scp.group(2).partition("@")
        return (f"git@{scp.group(1)}:{repo_path}", ref) if at and repo_path and ref else (url, None)
    if "://" in url:
        scheme, _, rest = url.partition("://")
        netloc, slash, path = rest.partition("/")
        repo_path, at, ref = path.partition("@")
        if at and repo_path and ref:
            return f"{scheme}://{netloc}{slash}{repo_path}", ref
        return url, None
    host, slash, path = url.partition("/")
    repo_path, at, ref = path.partition("@")
    if slash and at and repo_path and ref:
        return f"{host}/{repo_path}", ref
    return url, None


def _git_source(raw: str) -> PackageSource | None:
    text = raw.strip()
    prefixed = text.startswith("git:")
    url = text[4:].strip() if prefixed else text
    if not prefixed and not _PROTOCOL.match(url):
        return None
    repo, ref = _split_ref(url)
    scp = _SCP.match(repo)
    if scp is not None:
        host, path = scp.group(1), scp.group(2)
    elif _PROTOCOL.match(repo):
        parts = urlsplit(repo)
        host, path = parts.hostname or "", parts.path
    elif repo.startswith("github:"):
        host, path = "github.com", repo[len("github:") :]
    else:
        host, _, path = repo.partition("/")
        if "." not in host and host != "localhost":
            return None
    path = path.lstrip("/").removesuffix(".git")
    unsafe = ".." in path.split("/") or "\\" in path or "\0" in path or "/" in host
    if not host or len(path.split("/")) < 2 or unsafe:
        return None
    return PackageSource(raw, "git", host=host, path=path, ref=ref)


def parse_package_source(source: str) -> PackageSource:
    """A ``packages`` source as pi reads it (npm, git, else a local path)."""
    text = source.strip()
    if text.startswith("npm:"):
        spec = text[len("npm:") :].strip()
        match = re.match(r"^(@?[^@]+(?:/[^@]+)?)(?:@(.+))?$", spec)
        return PackageSource(source, "npm", name=match.group(1) if match else spec)
    if not text.startswith(_NOT_LOCAL):
        return PackageSource(source, "local", path=text)
    git = _git_source(text)
    return git if git is not None else PackageSource(source, "local", path=text)


# --------------------------------------------------------------------------- file patterns


def _delta_patterns(files: Sequence[str], patterns: Sequence[str], base: str) -> dict[str, bool]:
    """``autoload: false``: only the files a pattern names, each switched on or off."""
    out: dict[str, bool] = {}
    for pattern in patterns:
        target = pattern[1:] if is_override(pattern) else pattern
        enabled = not pattern.startswith(("-", "!"))
        exact = pattern.startswith(("+", "-"))
        for path in files:
            hit = (matches_exact if exact else matches_glob)(path, [target], base)
            if hit:
                out[path] = enabled
    return out


# --------------------------------------------------------------------------- files of a package


def _read_manifest(root: str) -> dict[str, Any] | None:
    """The ``pi`` object of ``root/package.json`` (only string-list resource fields kept)."""
    try:
        with open(os.path.join(root, "package.json"), "rb") as handle:
            data = orjson.loads(handle.read().removeprefix(b"\xef\xbb\xbf"))
    except (OSError, orjson.JSONDecodeError):
        return None
    pi = data.get("pi") if isinstance(data, dict) else None
    if not isinstance(pi, dict):
        return None
    manifest: dict[str, Any] = {
        kind: entries
        for kind in _KINDS
        if isinstance(entries := pi.get(kind), list) and all(isinstance(e, str) for e in entries)
    }
    if isinstance(pi.get("changelogPath"), str):
        manifest["changelogPath"] = pi["changelogPath"]
    return manifest


def _extension_entries(directory: str) -> list[str] | None:
    """A folder's own extension entry (manifest list, ``index.ts``, ``index.js``) or ``None``."""
    manifest = _read_manifest(directory)
    listed = [
        os.path.join(directory, e)
        for e in (manifest or {}).get("extensions", [])
        if os.path.exists(os.path.join(directory, e))
    ]
    if listed:
        return listed
    for name in ("index.ts", "index.js"):
        if os.path.exists(os.path.join(directory, name)):
            return [os.path.join(directory, name)]
    return None


def _collect_extensions(directory: str) -> list[str]:
    own = _extension_entries(directory)
    if own is not None:
        return own
    out: list[str] = []
    for name in _listdir(directory):
        path = os.path.join(directory, name)
        if os.path.isfile(path) and name.endswith(_SUFFIXES["extensions"]):
            out.append(path)
        elif os.path.isdir(path):
            out += _extension_entries(path) or []
    return out


def _listdir(directory: str) -> list[str]:
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    return [n for n in names if not n.startswith(".") and n != "node_modules"]


def _collect(directory: str, kind: ResourceKind) -> list[str]:
    """The files of ``kind`` under ``directory`` (ignore files honoured, dot entries and
    ``node_modules`` skipped)."""
    if kind == "skills":
        return collect_skill_entries(directory, "pi")
    if kind == "extensions":
        return _collect_extensions(directory)
    if kind == "prompts":
        return collect_skill_entries(directory, "all")
    out: list[str] = []
    for name in _listdir(directory):
        path = os.path.join(directory, name)
        if os.path.isdir(path):
            out += _collect(path, kind)
        elif name.endswith(_SUFFIXES[kind]) and os.path.isfile(path):
            out.append(path)
    return out


def _from_paths(paths: Iterable[str], kind: ResourceKind) -> list[str]:
    out: list[str] = []
    for path in paths:
        if os.path.isfile(path):
            out.append(path)
        elif os.path.isdir(path):
            out += _collect(path, kind)
    return out


def _expand_glob(pattern: str, root: str) -> list[str]:
    """A manifest glob's matches under ``root``, dot-named segments left out."""
    found = glob.glob(pattern, root_dir=root, recursive=True)
    keep = [
        os.path.normpath(os.path.join(root, m))
        for m in found
        if all(s == ".." or not s.startswith(".") for s in os.path.normpath(m).split(os.sep))
    ]
    return sorted(keep)


def _manifest_files(entries: Sequence[str], root: str, kind: ResourceKind) -> list[str]:
    paths: list[str] = []
    for entry in entries:
        if is_override(entry):
            continue
        if "*" in entry or "?" in entry:
            paths += _expand_glob(entry, root)
        else:
            paths.append(os.path.normpath(os.path.join(root, entry)))
    return _from_paths(paths, kind)


def _offered(root: str, manifest: Mapping[str, Any] | None, kind: ResourceKind) -> list[str]:
    """What the package itself offers of ``kind`` (its manifest, else its folder)."""
    entries = (manifest or {}).get(kind)
    if entries:
        files = _manifest_files(entries, root, kind)
        patterns = [e for e in entries if is_override(e)]
        enabled = apply_patterns(files, patterns, root) if patterns else set(files)
        return [f for f in files if f in enabled]
    folder = os.path.join(root, kind)
    return _collect(folder, kind) if os.path.isdir(folder) else []


# --------------------------------------------------------------------------- resolving


class PackageResources(Struct):
    """The resources of every configured package, in the order they rank."""

    skills: list[tuple[str, SkillSourceInfo]] = field(default_factory=list)
    prompts: list[tuple[str, SkillSourceInfo]] = field(default_factory=list)
    themes: list[tuple[str, SkillSourceInfo]] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    """One warning per package not installed, and per package with extensions."""


class _Entry(Struct):
    source: PackageSource
    scope: str
    filters: Mapping[str, Any] | None


def _entries(data: Mapping[str, Any], scope: str) -> list[_Entry]:
    out: list[_Entry] = []
    raw = data.get("packages")
    for item in raw if isinstance(raw, list) else ():
        if isinstance(item, str) and item.strip():
            out.append(_Entry(parse_package_source(item), scope, None))
        elif isinstance(item, Mapping) and isinstance(item.get("source"), str):
            out.append(_Entry(parse_package_source(item["source"]), scope, item))
    return out


def _dedupe(entries: list[_Entry], bases: Mapping[str, str]) -> list[_Entry]:
    """Project entries first; the same package once (project wins), but a project entry with
    ``autoload: false`` keeps the user's entry after it."""
    result: list[_Entry] = []
    index: dict[str, int] = {}
    for entry in entries:
        key = entry.source.identity(bases[entry.scope])
        at = index.get(key)
        if at is None:
            index[key] = len(result)
            result.append(entry)
            continue
        existing = result[at]
        if existing.scope == "project" and entry.scope == "user":
            if existing.filters is not None and existing.filters.get("autoload") is False:
                result.append(entry)
        elif entry.scope == "project":
            result[at] = entry
    return result


def _install_hint(entry: _Entry) -> str:
    local = " -l" if entry.scope == "project" else ""
    return f"pi install{local} {entry.source.raw.strip()}"


def resolve_packages(
    *,
    cwd: str,
    agent_dir: str,
    global_settings: Mapping[str, Any],
    project_settings: Mapping[str, Any],
    trusted: bool,
) -> PackageResources:
    """Every configured package's skills, prompt templates and themes (see the module)."""
    bases = {"project": os.path.join(cwd, ".pi"), "user": agent_dir}
    entries = (_entries(project_settings, "project") if trusted else []) + _entries(
        global_settings, "user"
    )
    entries = _dedupe(entries, bases)
    taken: dict[ResourceKind, dict[str, tuple[SkillSourceInfo, bool]]] = {k: {} for k in _KINDS}
    out = PackageResources()
    for entry in entries:
        scope, source = entry.scope, entry.source
        filters = entry.filters
        delta = filters is not None and filters.get("autoload") is False
        if delta and scope == "project":
            base_entry = next(
                (
                    e
                    for e in entries
                    if e.scope == "user"
                    and e.source.identity(bases["user"]) == source.identity(bases["project"])
                ),
                None,
            )
            if base_entry is not None:
                source = base_entry.source
                root_scope = "user"
            else:
                root_scope = scope
        else:
            root_scope = scope
        root = source.install_dir(root_scope, cwd, agent_dir)
        if not os.path.isdir(root):
            if source.kind == "local":
                if os.path.isfile(root):  # a single file is one extension
                    out.diagnostics.append(_extension_warning(entry, [root]))
                else:
                    out.diagnostics.append(
                        Diagnostic(
                            "warning", f'package "{entry.source.raw}": {root} does not exist', root
                        )
                    )
            else:
                out.diagnostics.append(
                    Diagnostic(
                        "warning",
                        f'package "{entry.source.raw}" is not installed ({root} is missing);'
                        f' pictx does not install packages: run "{_install_hint(entry)}"',
                        root,
                    )
                )
            continue
        manifest = _read_manifest(root)
        info = SkillSourceInfo(
            root,
            entry.source.raw,
            scope,
            origin="package",
            base_dir=root,
            changelog_path=_changelog(root, manifest),
        )
        extensions: list[str] = []
        for kind in _KINDS:
            offered = _offered(root, manifest, kind)
            patterns = filters.get(kind) if filters is not None else None
            if delta:
                chosen = _delta_patterns(offered, patterns or [], root)
            elif isinstance(patterns, list):  # [] loads none of this kind
                strings = [p for p in patterns if isinstance(p, str)]
                enabled = apply_patterns(offered, strings, root) if strings else set()
                chosen = {f: f in enabled for f in offered}
            else:
                chosen = dict.fromkeys(offered, True)
            for path, on in chosen.items():
                taken[kind].setdefault(path, (info, on))
                if on and kind == "extensions":
                    extensions.append(path)
        if source.kind == "local" and filters is None and not _declares_resources(root, manifest):
            extensions += _extension_entries(root) or []  # the folder is one extension
        if extensions:
            out.diagnostics.append(_extension_warning(entry, extensions))
    for kind, target in (("skills", out.skills), ("prompts", out.prompts), ("themes", out.themes)):
        for path, (info, on) in taken[kind].items():
            if on:
                target.append(
                    (
                        path,
                        SkillSourceInfo(
                            path,
                            info.source,
                            info.scope,
                            info.origin,
                            info.base_dir,
                            info.changelog_path,
                        ),
                    )
                )
    return out


def _declares_resources(root: str, manifest: Mapping[str, Any] | None) -> bool:
    """A manifest resource list, or one of the resource folders."""
    if manifest is not None and any(kind in manifest for kind in _KINDS):
        return True
    return any(os.path.isdir(os.path.join(root, kind)) for kind in _KINDS)


def _extension_warning(entry: _Entry, paths: Sequence[str]) -> Diagnostic:
    names = ", ".join(os.path.basename(p) for p in paths[:3]) + (" ..." if len(paths) > 3 else "")
    return Diagnostic(
        "warning",
        f'package "{entry.source.raw}": its extensions ({names}) are TypeScript/JavaScript,'
        " which pictx cannot load; its skills and prompt templates are used",
        paths[0],
    )


def _changelog(root: str, manifest: Mapping[str, Any] | None) -> str | None:
    """The package's changelog file (``pi.changelogPath``, default ``CHANGELOG.md``), if it
    is a file inside the package."""
    name = (manifest or {}).get("changelogPath", "CHANGELOG.md")
    if not name:
        return None
    path = os.path.normpath(os.path.join(root, name))
    real_root = os.path.realpath(root)
    real = os.path.realpath(path)
    inside = real != real_root and real.startswith(real_root + os.sep)
    return path if inside and os.path.isfile(path) else None
