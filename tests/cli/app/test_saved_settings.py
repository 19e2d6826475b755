"""Saving picker choices keeps every other setting and never overwrites a broken file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_context.cli.app.saved_settings import save_default_model, update_global_settings
from pi_context.errors import SettingsError


def test_update_keeps_other_keys_in_order_and_removes_none(tmp_path: Path) -> None:
    (tmp_path / "settings.json").write_text(
        json.dumps({"theme": "dark", "x-unknown": {"a": [1]}, "defaultThinkingLevel": "low"})
    )
    update_global_settings(tmp_path, {"defaultThinkingLevel": "high", "enabledModels": None})
    saved = json.loads((tmp_path / "settings.json").read_text())
    assert list(saved) == ["theme", "x-unknown", "defaultThinkingLevel"]
    assert saved["defaultThinkingLevel"] == "high"
    update_global_settings(tmp_path, {"theme": None})
    assert "theme" not in json.loads((tmp_path / "settings.json").read_text())


def test_a_missing_file_is_created(tmp_path: Path) -> None:
    update_global_settings(tmp_path / "agent", {"enabledModels": ["a/b"]})
    assert json.loads((tmp_path / "agent" / "settings.json").read_text()) == {
        "enabledModels": ["a/b"]
    }


@pytest.mark.parametrize("text", ["{not json", "[1, 2]"])
def test_a_broken_file_is_named_and_left_unchanged(tmp_path: Path, text: str) -> None:
    path = tmp_path / "settings.json"
    path.write_text(text)
    with pytest.raises(SettingsError, match=r"settings\.json"):
        update_global_settings(tmp_path, {"defaultThinkingLevel": "high"})
    assert path.read_text() == text
    assert [p.name for p in tmp_path.iterdir()] == ["settings.json"]  # no temporary left


def test_default_model_joins_a_non_empty_scope(tmp_path: Path) -> None:
    save_default_model(tmp_path, "openai", "gpt-5")
    saved = json.loads((tmp_path / "settings.json").read_text())
    assert saved == {"defaultProvider": "openai", "defaultModel": "gpt-5"}
    update_global_settings(tmp_path, {"enabledModels": ["anthropic/*"]})
    save_default_model(tmp_path, "openai", "gpt-5")
    save_default_model(tmp_path, "openai", "gpt-5")
    saved = json.loads((tmp_path / "settings.json").read_text())
    assert saved["enabledModels"] == ["anthropic/*", "openai/gpt-5"]
