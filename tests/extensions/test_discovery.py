"""Whether there is any extension to load, answered without loading one (and, when no
installed distribution declares the entry-point group, without ``importlib.metadata``)."""

from __future__ import annotations

import importlib.metadata
import sys
import zipfile
from pathlib import Path

import pytest

from pi_context.extensions.discovery import ENTRY_POINT_GROUP, has_extensions_to_load


def _dist(site: Path, name: str, entry_points: str | None) -> None:
    dist = site / f"{name}-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    if entry_points is not None:
        (dist / "entry_points.txt").write_text(entry_points)


def _only(monkeypatch: pytest.MonkeyPatch, *entries: Path) -> None:
    monkeypatch.setattr(sys, "path", [str(e) for e in entries])


def _has(tmp_path: Path) -> bool:
    return has_extensions_to_load(tmp_path, tmp_path / "agent", trusted=True, entry_points=True)


def test_a_declared_group_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    _dist(site, "plain", "[console_scripts]\nplain = plain:main\n")
    _dist(site, "ext", f"[{ENTRY_POINT_GROUP}]\ndemo = ext_module\n")
    _only(monkeypatch, site)
    assert _has(tmp_path)


def test_no_declaration_means_nothing_to_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    _dist(site, "plain", "[console_scripts]\nplain = plain:main\n")
    _dist(site, "bare", None)
    # the group's name elsewhere in a file (a value, not a section header) declares nothing
    _dist(site, "mention", f"[console_scripts]\nx = {ENTRY_POINT_GROUP}:main\n")
    _only(monkeypatch, site, tmp_path / "missing")

    def parse_everything(**_: object) -> object:
        raise AssertionError("importlib.metadata was asked although nothing declares the group")

    monkeypatch.setattr(importlib.metadata, "entry_points", parse_everything)
    assert not _has(tmp_path)


def test_a_header_that_declares_no_entry_point_is_nothing_to_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scan only rules out; a file it cannot rule out is read by importlib.metadata."""
    site = tmp_path / "site"
    _dist(site, "empty", f"[{ENTRY_POINT_GROUP}]\n")
    _only(monkeypatch, site)
    assert not _has(tmp_path)


def test_a_zip_on_the_path_is_left_to_importlib_metadata(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = tmp_path / "bundle.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("zext-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: zext\n")
        zipped.writestr("zext-1.0.dist-info/entry_points.txt", f"[{ENTRY_POINT_GROUP}]\nz = zext\n")
    _only(monkeypatch, archive)
    assert _has(tmp_path)


def test_an_egg_on_the_path_is_left_to_importlib_metadata(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    egg = tmp_path / "eext-1.0-py3.11.egg"
    (egg / "EGG-INFO").mkdir(parents=True)
    (egg / "EGG-INFO" / "PKG-INFO").write_text("Metadata-Version: 1.1\nName: eext\nVersion: 1.0\n")
    (egg / "EGG-INFO" / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\ne = eext\n")
    _only(monkeypatch, egg)
    assert _has(tmp_path)


def test_metadata_folder_names_are_matched_in_any_case(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    dist = site / "Loud-1.0.DIST-INFO"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: loud\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\nloud = loud_ext\n")
    _only(monkeypatch, site)
    assert _has(tmp_path)


def test_a_finder_that_lists_distributions_is_left_to_importlib_metadata(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Bundled:
        """A finder of an application bundle, with distributions no folder shows."""

        @staticmethod
        def find_spec(*_: object) -> None:
            return None

        @staticmethod
        def find_distributions(*_: object) -> list[object]:
            return []

    _only(monkeypatch, tmp_path / "missing")
    monkeypatch.setattr(sys, "meta_path", [Bundled, *sys.meta_path])
    asked: list[str] = []

    def entry_points(**kwargs: str) -> list[str]:
        asked.append(kwargs["group"])
        return []

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    assert not _has(tmp_path)
    assert asked == [ENTRY_POINT_GROUP]
