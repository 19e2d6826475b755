"""Value types shared by the resource loaders: context files, skills, diagnostics.

Each has ``to_json()`` giving pi 1.6.0's field names, so CLI output and conformance checks
compare with pi's own objects directly.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from msgspec import Struct

__all__ = ["ContextFile", "Diagnostic", "DiagnosticType", "Skill", "SkillSourceInfo"]

DiagnosticType = Literal["warning", "error", "collision"]


class ContextFile(Struct, frozen=True):
    """One loaded AGENTS.md-style file: its path as discovered and its text (BOM stripped)."""

    path: str
    content: str

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "content": self.content}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ContextFile:
        return cls(str(data["path"]), str(data["content"]))


class Diagnostic(Struct, frozen=True):
    """A problem found while loading resources; loading continues.

    ``collision`` is set for ``type == "collision"``: ``{resourceType, name, winnerPath,
    loserPath}``.
    """

    type: DiagnosticType
    message: str
    path: str | None = None
    collision: Mapping[str, str] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type, "message": self.message}
        if self.path is not None:
            out["path"] = self.path
        if self.collision is not None:
            out["collision"] = dict(self.collision)
        return out

    def __str__(self) -> str:
        where = f"{self.path}: " if self.path else ""
        return f"{self.type}: {where}{self.message}"


class SkillSourceInfo(Struct, frozen=True):
    """Where a skill came from (pi's ``sourceInfo``)."""

    path: str
    source: str
    scope: str
    origin: str = "top-level"
    base_dir: str | None = None
    changelog_path: str | None = None
    """A package's changelog file (``origin == "package"`` only)."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": self.path,
            "source": self.source,
            "scope": self.scope,
            "origin": self.origin,
        }
        if self.base_dir is not None:
            out["baseDir"] = self.base_dir
        if self.changelog_path is not None:
            out["changelogPath"] = self.changelog_path
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SkillSourceInfo:
        return cls(
            path=str(data.get("path", "")),
            source=str(data.get("source", "")),
            scope=str(data.get("scope", "")),
            origin=str(data.get("origin", "top-level")),
            base_dir=data.get("baseDir"),
            changelog_path=data.get("changelogPath"),
        )


class Skill(Struct, frozen=True):
    """A loaded skill. ``file_path`` is absolute; ``base_dir`` is its directory.

    Two skills are equal when everything but ``source_info`` is: where a skill was found does
    not change what the prompt says of it.
    """

    name: str
    description: str
    file_path: str
    base_dir: str
    disable_model_invocation: bool = False
    source_info: SkillSourceInfo | None = None

    def _identity(self) -> tuple[str, str, str, str, bool]:
        return (
            self.name,
            self.description,
            self.file_path,
            self.base_dir,
            self.disable_model_invocation,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Skill) or type(other) is not type(self):
            return NotImplemented
        return self._identity() == other._identity()

    def __hash__(self) -> int:
        return hash(self._identity())

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "filePath": self.file_path,
            "baseDir": self.base_dir,
            "disableModelInvocation": self.disable_model_invocation,
        }
        if self.source_info is not None:
            out["sourceInfo"] = self.source_info.to_json()
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Skill:
        info = data.get("sourceInfo")
        return cls(
            name=str(data["name"]),
            description=str(data["description"]),
            file_path=str(data["filePath"]),
            base_dir=str(data.get("baseDir", "")),
            disable_model_invocation=data.get("disableModelInvocation") is True,
            source_info=SkillSourceInfo.from_json(info) if isinstance(info, Mapping) else None,
        )
