"""``/model`` and Ctrl+L: the model picker (spec agent-parity §5.5), and ``/scoped-models``
(§4.5): which models Ctrl+P cycles through.

* ``/model <q>``: an exact reference (``provider/id`` or an id naming one model,
  case-insensitive) among the scope, or among the models with a key when there is no scope,
  switches at once; anything else opens the picker with ``<q>`` as its search.
* The picker starts on the scope when there is one (Tab toggles scope / all); rows are the
  current model first, the saved default second, then by provider (stable); the search is
  fuzzy over id, provider and name (plus ``default`` for the saved default). Enter switches for
  this session, Ctrl+S also saves it as the default. A model without a key says
  ``No API key for <provider>/<id>`` instead of switching.
* ``/scoped-models``: every model, those in the scope checked; Enter or Space toggles a model,
  Ctrl+A / Ctrl+X enable / clear every listed one, Ctrl+S saves the scope as ``enabledModels``
  (Esc keeps the change for this session only).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from prompt_toolkit.keys import Keys

from pi_context.cli.interactive.pickers.list import (
    Close,
    Outcome,
    PickerKey,
    PickerRow,
    Stay,
    fuzzy_score,
)

__all__ = [
    "ModelChoice",
    "ModelPick",
    "ModelPicker",
    "ScopeEditor",
    "exact_model",
    "sort_models",
]


@dataclass(frozen=True, slots=True)
class ModelChoice:
    provider: str
    id: str
    name: str
    available: bool
    """A key (or the local model) is configured."""

    @property
    def key(self) -> str:
        return f"{self.provider}/{self.id}"


@dataclass(frozen=True, slots=True)
class ModelPick:
    key: str
    save: bool = False
    """Ctrl+S: also save as the default model."""


def exact_model(choices: Sequence[ModelChoice], query: str) -> ModelChoice | None:
    """The one model ``query`` names exactly (``provider/id``, else a unique id)."""
    lowered = query.strip().lower()
    by_key = [c for c in choices if c.key.lower() == lowered]
    if by_key:
        return by_key[0]
    by_id = [c for c in choices if c.id.lower() == lowered]
    return by_id[0] if len(by_id) == 1 else None


def sort_models(
    choices: Sequence[ModelChoice], current: str | None, default: str | None
) -> list[ModelChoice]:
    """Current first, saved default second, then grouped by provider in first-seen order."""
    providers: dict[str, int] = {}
    for choice in choices:
        providers.setdefault(choice.provider, len(providers))

    def rank(item: tuple[int, ModelChoice]) -> tuple[int, int, int]:
        index, choice = item
        first = 0 if choice.key == current else 1 if choice.key == default else 2
        return first, providers[choice.provider], index

    return [choice for _, choice in sorted(enumerate(choices), key=rank)]


class ModelPicker:
    """The rows and keys of the ``/model`` picker."""

    def __init__(
        self,
        choices: Sequence[ModelChoice],
        *,
        scope: Sequence[str],
        current: str | None,
        default: str | None,
    ) -> None:
        self._all = sort_models(choices, current, default)
        self._scope = set(scope)
        self.scoped = bool(scope)
        self._current = current
        self._default = default

    def title(self) -> str:
        return f"Select model ({'scoped' if self.scoped else 'all'})"

    def _listed(self) -> list[ModelChoice]:
        if self.scoped:
            return [c for c in self._all if c.key in self._scope]
        return self._all

    def rows(self, query: str) -> list[PickerRow[ModelPick]]:
        listed = self._listed()
        if query.strip():
            scored = []
            for index, choice in enumerate(listed):
                text = f"{choice.id} {choice.provider} {choice.name}"
                if choice.key == self._default:
                    text += " default"
                score = fuzzy_score(query, text)
                if score is not None:
                    scored.append((score, index, choice))
            listed = [choice for _, _, choice in sorted(scored, key=lambda s: (s[0], s[1]))]
        return [self._row(choice) for choice in listed]

    def _row(self, choice: ModelChoice) -> PickerRow[ModelPick]:
        notes = []
        if choice.key == self._current:
            notes.append("current")
        if choice.key == self._default:
            notes.append("default")
        if not choice.available:
            notes.append("no key")
        text = f"{choice.id}  [{choice.provider}]"
        if choice.name and choice.name != choice.id:
            text += f"  {choice.name}"
        return PickerRow(ModelPick(choice.key), text, note=", ".join(notes))

    def initial(self, rows: Sequence[PickerRow[ModelPick]]) -> int:
        return 0

    def _usable(self, key: str) -> str | None:
        choice = next((c for c in self._all if c.key == key), None)
        if choice is not None and not choice.available:
            return f"No API key for {key}"
        return None

    def choose(self, value: ModelPick, query: str) -> Outcome[ModelPick]:
        problem = self._usable(value.key)
        return Stay(problem) if problem else Close(value)

    def _save(self, value: ModelPick | None, _query: str) -> Outcome[ModelPick]:
        if value is None:
            return Stay()
        problem = self._usable(value.key)
        return Stay(problem) if problem else Close(ModelPick(value.key, save=True))

    def _toggle(self, _value: ModelPick | None, _query: str) -> Outcome[ModelPick]:
        if not self._scope:
            return Stay("No model scope: every model is listed (see /scoped-models)")
        self.scoped = not self.scoped
        return Stay()

    def bindings(self) -> list[PickerKey[ModelPick]]:
        return [
            PickerKey((Keys.Tab,), "Tab", "scoped/all", self._toggle),
            PickerKey(("c-s",), "Ctrl+S", "select and save as default", self._save),
        ]


class ScopeEditor:
    """The rows and keys of ``/scoped-models``; :attr:`enabled` is the scope being edited."""

    def __init__(self, choices: Sequence[ModelChoice], scope: Sequence[str]) -> None:
        self._all = [c for c in choices if c.available or c.key in scope]
        self.enabled: list[str] = list(scope)
        self.saved = False

    def title(self) -> str:
        count = len(self.enabled)
        return f"Model scope ({count} enabled; none = every model with a key)"

    def rows(self, query: str) -> list[PickerRow[str]]:
        listed = self._all
        if query.strip():
            listed = [
                c for c in listed if fuzzy_score(query, f"{c.id} {c.provider} {c.name}") is not None
            ]
        return [
            PickerRow(
                c.key,
                f"{c.id}  [{c.provider}]",
                note="" if c.available else "no key",
                marked=c.key in self.enabled,
            )
            for c in listed
        ]

    def initial(self, rows: Sequence[PickerRow[str]]) -> int:
        return 0

    def choose(self, value: str, query: str) -> Outcome[str]:
        return self._toggle(value, query)

    def _toggle(self, value: str | None, _query: str) -> Outcome[str]:
        if value is None:
            return Stay()
        if value in self.enabled:
            self.enabled.remove(value)
        else:
            self.enabled.append(value)
        return Stay()

    def _all_on(self, _value: str | None, query: str) -> Outcome[str]:
        for row in self.rows(query):
            if row.value not in self.enabled:
                self.enabled.append(row.value)
        return Stay()

    def _all_off(self, _value: str | None, query: str) -> Outcome[str]:
        listed = {row.value for row in self.rows(query)}
        self.enabled = [key for key in self.enabled if key not in listed]
        return Stay()

    def _save(self, _value: str | None, _query: str) -> Outcome[str]:
        self.saved = True
        return Close(None)

    def bindings(self) -> list[PickerKey[str]]:
        return [
            PickerKey((" ",), "Space", "toggle", self._toggle),
            PickerKey(("c-a",), "Ctrl+A", "enable all listed", self._all_on),
            PickerKey(("c-x",), "Ctrl+X", "clear all listed", self._all_off),
            PickerKey(("c-s",), "Ctrl+S", "save to settings", self._save),
        ]
