"""The /model picker's rows, order, search and keys; the /scoped-models editor."""

from __future__ import annotations

from pi_context.cli.interactive.pickers.list import Close, Stay
from pi_context.cli.interactive.pickers.model import (
    ModelChoice,
    ModelPick,
    ModelPicker,
    ScopeEditor,
    exact_model,
    sort_models,
)

CHOICES = [
    ModelChoice("anthropic", "claude-sonnet-4-5", "Claude Sonnet 4.5", False),
    ModelChoice("openai", "gpt-5", "GPT-5", True),
    ModelChoice("anthropic", "claude-haiku-4-5", "Claude Haiku 4.5", True),
    ModelChoice("openai", "gpt-5-mini", "GPT-5 mini", True),
    ModelChoice("openrouter", "gpt-5", "GPT-5 (OpenRouter)", True),
]


def _keys(picker: ModelPicker, query: str = "") -> list[str]:
    return [row.value.key for row in picker.rows(query)]


def test_exact_reference_needs_provider_id_or_a_unique_id() -> None:
    found = exact_model(CHOICES, "OpenAI/GPT-5")
    assert found is not None
    assert found.key == "openai/gpt-5"
    haiku = exact_model(CHOICES, "claude-haiku-4-5")
    assert haiku is not None
    assert haiku.key == "anthropic/claude-haiku-4-5"
    assert exact_model(CHOICES, "gpt-5") is None  # two providers: the picker decides
    assert exact_model(CHOICES, "haiku") is None  # not exact


def test_sort_current_then_default_then_provider_groups_stably() -> None:
    ordered = [c.key for c in sort_models(CHOICES, "openai/gpt-5-mini", "openrouter/gpt-5")]
    assert ordered == [
        "openai/gpt-5-mini",
        "openrouter/gpt-5",
        "anthropic/claude-sonnet-4-5",
        "anthropic/claude-haiku-4-5",
        "openai/gpt-5",
    ]


def test_scoped_first_and_tab_toggles_all() -> None:
    picker = ModelPicker(
        CHOICES, scope=["openai/gpt-5", "anthropic/claude-haiku-4-5"], current=None, default=None
    )
    assert picker.title() == "Select model (scoped)"
    assert _keys(picker) == ["anthropic/claude-haiku-4-5", "openai/gpt-5"]
    toggle = next(k for k in picker.bindings() if k.label == "Tab")
    assert isinstance(toggle.action(None, ""), Stay)
    assert picker.title() == "Select model (all)"
    assert len(_keys(picker)) == len(CHOICES)


def test_without_a_scope_tab_says_so_and_lists_everything() -> None:
    picker = ModelPicker(CHOICES, scope=[], current=None, default=None)
    toggle = next(k for k in picker.bindings() if k.label == "Tab")
    outcome = toggle.action(None, "")
    assert isinstance(outcome, Stay)
    assert "No model scope" in outcome.status
    assert picker.title() == "Select model (all)"


def test_search_is_fuzzy_over_id_provider_name_and_default() -> None:
    picker = ModelPicker(CHOICES, scope=[], current=None, default="anthropic/claude-haiku-4-5")
    assert _keys(picker, "haiku") == ["anthropic/claude-haiku-4-5"]
    assert _keys(picker, "default") == ["anthropic/claude-haiku-4-5"]
    assert set(_keys(picker, "openrouter")) == {"openrouter/gpt-5"}
    assert _keys(picker, "gpt mini") == ["openai/gpt-5-mini"]
    assert _keys(picker, "zzz") == []


def test_rows_mark_current_default_and_missing_keys() -> None:
    picker = ModelPicker(
        CHOICES, scope=[], current="openai/gpt-5", default="anthropic/claude-sonnet-4-5"
    )
    rows = {row.value.key: row for row in picker.rows("")}
    assert rows["openai/gpt-5"].note == "current"
    assert rows["anthropic/claude-sonnet-4-5"].note == "default, no key"
    assert rows["openai/gpt-5"].text == "gpt-5  [openai]  GPT-5"


def test_enter_switches_ctrl_s_saves_and_a_model_without_key_refuses() -> None:
    picker = ModelPicker(CHOICES, scope=[], current=None, default=None)
    assert picker.choose(ModelPick("openai/gpt-5"), "") == Close(ModelPick("openai/gpt-5"))
    save = next(k for k in picker.bindings() if k.label == "Ctrl+S")
    assert save.action(ModelPick("openai/gpt-5"), "") == Close(ModelPick("openai/gpt-5", True))
    refused = picker.choose(ModelPick("anthropic/claude-sonnet-4-5"), "")
    assert refused == Stay("No API key for anthropic/claude-sonnet-4-5")
    assert save.action(ModelPick("anthropic/claude-sonnet-4-5"), "") == refused


def test_scope_editor_toggles_enables_clears_and_saves() -> None:
    editor = ScopeEditor(CHOICES, ["openai/gpt-5"])
    listed = [row.value for row in editor.rows("")]
    assert "anthropic/claude-sonnet-4-5" not in listed  # no key: cannot be cycled to
    assert [row.value for row in editor.rows("") if row.marked] == ["openai/gpt-5"]
    editor.choose("openai/gpt-5-mini", "")
    editor.choose("openai/gpt-5", "")
    assert editor.enabled == ["openai/gpt-5-mini"]
    keys = {k.label: k for k in editor.bindings()}
    keys["Ctrl+A"].action(None, "claude")
    assert editor.enabled == ["openai/gpt-5-mini", "anthropic/claude-haiku-4-5"]
    keys["Ctrl+X"].action(None, "mini")
    assert editor.enabled == ["anthropic/claude-haiku-4-5"]
    assert not editor.saved
    assert keys["Ctrl+S"].action(None, "") == Close(None)
    assert editor.saved
