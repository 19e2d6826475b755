"""pi's ``keybindings.json``: action ids, key syntax and the keys in effect.

``<agentDir>/keybindings.json`` maps an action id (``app.editor.external``) to one key or a
list of keys written as ``modifier+key`` (``ctrl+g``, ``shift+enter``, ``alt+ctrl+x``). A
configured value replaces the action's default keys; an empty list unbinds it. pi's older
flat names (``externalEditor``, ``newLine``, ...) are read as the ids they became, the new id
winning when a file holds both. ``$schema`` is ignored.

pi drops an entry it cannot use without a word; pictx reports each one once, naming the file
and the entry: an action id that does not exist, a key it cannot parse, a key with ``super``
(which needs the kitty keyboard protocol pictx does not read), and a pi action pictx has no
remapping for (its keys stay as they are). A file that is not a JSON object is reported and
ignored as a whole. Nothing here raises.

When one key is claimed by several actions, the action that pi checks first takes it: the
clipboard paste, then interrupt, then the other application actions in pi's order, then the
editor's own (new line, submit); so a key moved to an action that pi checks later than the
key's current owner does nothing until that owner is moved too. Such a lost key is reported
as well.

Keys become prompt_toolkit key sequences (:func:`parse_key`). A modified key prompt_toolkit
has no name for (``shift+enter``, ``ctrl+shift+x``, ``ctrl+1``) is read from the sequences
terminals send for it with extended keys (``CSI code;mod u`` and xterm's ``CSI 27;mod;code
~``), registered once under a key no keyboard sends (``F23``, ``F24``, ``Ctrl+F13`` ...).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, cast

from prompt_toolkit.input.ansi_escape_sequences import ANSI_SEQUENCES
from prompt_toolkit.keys import Keys

if TYPE_CHECKING:
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

    KeyHandler = Callable[[KeyPressEvent], None]
    """A key binding's handler."""

__all__ = [
    "DEFAULT_KEYS",
    "KEYBINDINGS_FILE",
    "PI_ONLY_ACTIONS",
    "KeySpecError",
    "Keymap",
    "display_key",
    "load_keymap",
    "parse_key",
    "sentinel_name",
]

KEYBINDINGS_FILE: Final = "keybindings.json"

KeySeq = tuple[str, ...]
"""A prompt_toolkit key sequence: ``("c-g",)``, ``("escape", "c-m")``."""

DEFAULT_KEYS: Final[Mapping[str, tuple[str, ...]]] = {
    # in the order pi checks them when one key is claimed by several actions
    "app.clipboard.pasteImage": ("ctrl+v", "alt+v"),
    "app.interrupt": ("escape",),
    "app.suspend": ("ctrl+z",),
    "app.thinking.cycle": ("shift+tab",),
    "app.model.cycleForward": ("ctrl+p",),
    "app.model.cycleBackward": ("shift+ctrl+p", "alt+p"),
    "app.model.select": ("ctrl+l",),
    "app.tools.expand": ("ctrl+o",),
    "app.thinking.toggle": ("ctrl+t",),
    "app.editor.external": ("ctrl+g",),
    "app.message.copy": ("ctrl+x",),
    "app.message.followUp": ("alt+enter",),
    "app.message.dequeue": ("alt+up",),
    "tui.input.newLine": ("shift+enter", "ctrl+j"),
    "tui.input.submit": ("enter",),
}
"""The actions pictx lets ``keybindings.json`` remap, with pictx's default keys (pi's, plus
``alt+v`` and ``alt+p`` for terminals where ``ctrl+v`` / ``shift+ctrl+p`` do not arrive)."""

PI_ONLY_ACTIONS: Final = frozenset(
    {
        "app.clear",
        "app.exit",
        "app.thinking.save",
        "app.session.new",
        "app.session.tree",
        "app.session.fork",
        "app.session.resume",
        "app.session.togglePath",
        "app.session.toggleSort",
        "app.session.toggleNamedFilter",
        "app.session.rename",
        "app.session.delete",
        "app.session.deleteNoninvasive",
        "app.models.save",
        "app.models.enableAll",
        "app.models.clearAll",
        "app.models.toggleProvider",
        "app.models.reorderUp",
        "app.models.reorderDown",
        "app.tree.foldOrUp",
        "app.tree.unfoldOrDown",
        "app.tree.editLabel",
        "app.tree.toggleLabelTimestamp",
        "app.tree.filter.default",
        "app.tree.filter.noTools",
        "app.tree.filter.userOnly",
        "app.tree.filter.labeledOnly",
        "app.tree.filter.all",
        "app.tree.filter.cycleForward",
        "app.tree.filter.cycleBackward",
        *(
            f"tui.editor.{name}"
            for name in [
                "cursorUp",
                "cursorDown",
                "historyPrevious",
                "historyNext",
                "cursorLeft",
                "cursorRight",
                "cursorWordLeft",
                "cursorWordRight",
                "cursorLineStart",
                "cursorLineEnd",
                "jumpForward",
                "jumpBackward",
                "pageUp",
                "pageDown",
                "deleteCharBackward",
                "deleteCharForward",
                "deleteWordBackward",
                "deleteWordForward",
                "deleteToLineStart",
                "deleteToLineEnd",
                "yank",
                "yankPop",
                "undo",
            ]
        ),
        "tui.input.tab",
        "tui.input.copy",
        *(
            f"tui.select.{name}"
            for name in ["up", "down", "pageUp", "pageDown", "confirm", "cancel"]
        ),
        *(
            f"tui.altScreen.{name}"
            for name in [
                "pageUp",
                "pageDown",
                "halfPageUp",
                "halfPageDown",
                "lineUp",
                "lineDown",
                "previousPrompt",
                "nextPrompt",
                "search",
                "searchNext",
                "searchPrevious",
                "searchClose",
                "top",
                "bottom",
            ]
        ),
    }
)
"""pi's other action ids: known, but their keys in pictx are prompt_toolkit's or the
pickers' own (an entry for one is reported, not applied)."""

_LEGACY_NAMES: Final[Mapping[str, str]] = {
    "interrupt": "app.interrupt",
    "clear": "app.clear",
    "exit": "app.exit",
    "suspend": "app.suspend",
    "cycleThinkingLevel": "app.thinking.cycle",
    "cycleModelForward": "app.model.cycleForward",
    "cycleModelBackward": "app.model.cycleBackward",
    "selectModel": "app.model.select",
    "expandTools": "app.tools.expand",
    "toggleThinking": "app.thinking.toggle",
    "externalEditor": "app.editor.external",
    "followUp": "app.message.followUp",
    "dequeue": "app.message.dequeue",
    "pasteImage": "app.clipboard.pasteImage",
    "newLine": "tui.input.newLine",
    "submit": "tui.input.submit",
    "tab": "tui.input.tab",
    "copy": "tui.input.copy",
}
"""pi's older flat action names (those of actions listed above) and the ids they became."""

_MODIFIERS: Final = ("ctrl", "shift", "alt", "super")
_SPECIAL: Final[Mapping[str, str]] = {
    "escape": "escape",
    "esc": "escape",
    "enter": "c-m",
    "return": "c-m",
    "tab": "c-i",
    "space": " ",
    "backspace": "c-h",
    "delete": "delete",
    "insert": "insert",
    "clear": "clear",
    "home": "home",
    "end": "end",
    "pageup": "pageup",
    "pagedown": "pagedown",
    "up": "up",
    "down": "down",
    "left": "left",
    "right": "right",
    **{f"f{n}": f"f{n}" for n in range(1, 13)},
}
_SYMBOLS: Final = "`-=[]\\;',./!@#$%^&*()_+|~{}:<>?"
_NAVIGATION: Final = frozenset(
    {"up", "down", "left", "right", "home", "end", "delete", "insert", "pageup", "pagedown"}
)
_CTRL_SYMBOLS: Final[Mapping[str, str]] = {
    "@": "c-@",
    "\\": "c-\\",
    "]": "c-]",
    "^": "c-^",
    "_": "c-_",
    "space": "c-@",
}
_CODES: Final[Mapping[str, int]] = {"enter": 13, "return": 13, "tab": 9, "space": 32}

_SENTINEL_POOL: Final = tuple(Keys(f"c-f{n}") for n in range(13, 25))
_sentinels: dict[str, str] = {"shift+enter": Keys.F23.value, "ctrl+shift+p": Keys.F24.value}
"""Canonical key spec -> the prompt_toolkit key standing for it (registered sequences)."""
_sentinel_names: dict[str, str] = {Keys.F23.value: "Shift+Enter", Keys.F24.value: "Shift+Ctrl+P"}


class KeySpecError(ValueError):
    """A key written in ``keybindings.json`` that pictx cannot read; ``str()`` says why."""


def _canonical(modifiers: Iterable[str], base: str) -> str:
    return "+".join([*(m for m in _MODIFIERS if m in set(modifiers)), base])


def _modifier_parameter(modifiers: frozenset[str]) -> int:
    return 1 + ("shift" in modifiers) + 2 * ("alt" in modifiers) + 4 * ("ctrl" in modifiers)


def _register_extended(spec: str, modifiers: frozenset[str], base: str) -> str:
    """The sentinel key for a modified key prompt_toolkit cannot name, its extended-key
    sequences registered (once)."""
    if spec in _sentinels:
        key = _sentinels[spec]
    else:
        used = set(_sentinels.values())
        free = [k.value for k in _SENTINEL_POOL if k.value not in used]
        if not free:
            raise KeySpecError("too many keys without a terminal name in one file")
        key = free[0]
        _sentinels[spec] = key
        _sentinel_names[key] = display_key(spec)
    mod = _modifier_parameter(modifiers)
    codes = {_CODES[base]} if base in _CODES else {ord(base), ord(base.upper())}
    for code in codes:
        for sequence in (f"\x1b[{code};{mod}u", f"\x1b[27;{mod};{code}~"):
            # over prompt_toolkit's reading, if any (it reads CSI 27;2;13~ as plain Enter)
            ANSI_SEQUENCES[sequence] = Keys(key)
    return key


def parse_key(text: str) -> KeySeq:
    """A key in pi's syntax as a prompt_toolkit key sequence; :class:`KeySpecError` if it is
    not one (or one no terminal reports to pictx)."""
    if not isinstance(text, str) or not text.strip():
        raise KeySpecError("a key must be a non-empty string")
    parts = text.strip().lower().split("+")
    if text.strip().endswith("+") and len(parts) > 1:  # "ctrl++": the key is "+"
        parts = [*parts[:-2], "+"]
    *mods, base = parts
    for mod in mods:
        if mod not in _MODIFIERS:
            raise KeySpecError(f"unknown modifier {mod!r} (use ctrl, shift, alt or super)")
    modifiers = frozenset(mods)
    if len(modifiers) != len(mods):
        raise KeySpecError("a modifier is repeated")
    if base not in _SPECIAL and not (len(base) == 1 and (base.isalnum() or base in _SYMBOLS)):
        raise KeySpecError(f"unknown key {base!r}")
    if "super" in modifiers:
        raise KeySpecError("super needs the kitty keyboard protocol, which pictx does not read")
    if "alt" in modifiers:
        rest = _canonical(modifiers - {"alt"}, base)
        sequence = ("escape", *parse_key(rest))
        if modifiers == {"alt"} and (base in _CODES or len(base) == 1):
            # a terminal reporting modified keys may send Alt+key in its extended form
            code = _CODES.get(base, ord(base[0]))
            keys = cast(Any, (Keys.Escape, sequence[1]))  # a key may be a plain character
            for extended in (f"\x1b[{code};3u", f"\x1b[27;3;{code}~"):
                ANSI_SEQUENCES.setdefault(extended, keys)
        return sequence
    return (_single(modifiers, base),)


def _single(modifiers: frozenset[str], base: str) -> str:
    spec = _canonical(modifiers, base)
    if not modifiers:
        return _SPECIAL.get(base, base)
    if modifiers == {"shift"}:
        if base == "tab":
            return "s-tab"
        if base in _NAVIGATION:
            return f"s-{base}"
        if len(base) == 1 and base.isalpha():
            return base.upper()
    if modifiers == {"ctrl"}:
        if len(base) == 1 and base.isalpha():
            return f"c-{base}"
        if base in _CTRL_SYMBOLS:
            return _CTRL_SYMBOLS[base]
        if base in _NAVIGATION:
            return f"c-{base}"
        if base in _SPECIAL and base.startswith("f"):
            return f"c-{base}"
    if modifiers == {"ctrl", "shift"} and base in _NAVIGATION:
        return f"c-s-{base}"
    if base in _CODES or (len(base) == 1 and (base.isalnum() or base in _SYMBOLS)):
        return _register_extended(spec, modifiers, base)
    raise KeySpecError(f"{spec} is not a key pictx can tell apart in a terminal")


def display_key(spec: str) -> str:
    """``ctrl+shift+p`` as ``/hotkeys`` writes it: ``Ctrl+Shift+P``."""
    names = {"pageup": "PageUp", "pagedown": "PageDown", "esc": "Esc", "escape": "Esc"}
    out = []
    for part in spec.split("+"):
        low = part.lower()
        out.append(names.get(low, part.upper() if len(part) == 1 else part.capitalize()))
    return "+".join(out)


def sentinel_name(key: str) -> str | None:
    """The name of the key a sentinel stands for (``f23`` -> ``Shift+Enter``)."""
    return _sentinel_names.get(key)


# the extended-key forms of the keys pictx binds by default (Shift+Ctrl+P's are registered
# where it is bound); Alt+Enter, as terminals send it with extended keys, stays Esc Enter
_register_extended("shift+enter", frozenset({"shift"}), "enter")
for _sequence in ("\x1b[13;3u", "\x1b[27;3;13~"):
    ANSI_SEQUENCES.setdefault(_sequence, (Keys.Escape, Keys.ControlM))


@dataclass(frozen=True, slots=True)
class Keymap:
    """The keys in effect for every remappable action, and what the file had wrong."""

    keys: Mapping[str, tuple[KeySeq, ...]]
    """Action id -> its key sequences, after conflicts (see the module doc)."""
    specs: Mapping[str, tuple[str, ...]]
    """Action id -> its keys as written (pi's syntax), after conflicts."""
    problems: tuple[str, ...] = ()
    """One line per entry not applied, naming the file and the entry."""
    path: Path | None = None
    remapped: frozenset[str] = field(default_factory=frozenset)
    """Actions whose keys the file set."""

    def sequences(self, action: str) -> tuple[KeySeq, ...]:
        return self.keys.get(action, ())

    def binder(self, bindings: KeyBindings) -> Callable[[str], Callable[[KeyHandler], None]]:
        """``on(action)``: a decorator adding its handler to ``bindings`` on every key
        sequence of ``action``."""

        def on(action: str) -> Callable[[KeyHandler], None]:
            def add(handler: KeyHandler) -> None:
                for keys in self.sequences(action):
                    bindings.add(*keys)(handler)

            return add

        return on

    def label(self, action: str) -> str:
        """The action's keys as ``/hotkeys`` writes them (``Ctrl+G``; ``(none)``)."""
        specs = self.specs.get(action, ())
        return ", ".join(display_key(s) for s in specs) if specs else "(none)"


def default_keymap() -> Keymap:
    return _resolve({}, (), None, frozenset())


def _resolve(
    configured: Mapping[str, tuple[str, ...]],
    problems: Sequence[str],
    path: Path | None,
    remapped: frozenset[str],
) -> Keymap:
    specs: dict[str, list[str]] = {}
    seqs: dict[str, list[KeySeq]] = {}
    issues = list(problems)
    for action, defaults in DEFAULT_KEYS.items():
        chosen = configured.get(action, defaults)
        specs[action], seqs[action] = [], []
        for spec in chosen:
            try:
                seq = parse_key(spec)
            except KeySpecError as exc:
                issues.append(f"{path}: {action}: key {spec!r}: {exc}")
                continue
            specs[action].append(spec)
            seqs[action].append(seq)
    # one key, one action: the action pi checks first keeps it (DEFAULT_KEYS is in that order)
    owner: dict[KeySeq, str] = {}
    for action in DEFAULT_KEYS:
        for seq in seqs[action]:
            owner.setdefault(seq, action)
    final_specs: dict[str, tuple[str, ...]] = {}
    final_keys: dict[str, tuple[KeySeq, ...]] = {}
    for action in DEFAULT_KEYS:
        kept = []
        for spec, seq in zip(specs[action], seqs[action], strict=True):
            if owner[seq] == action:
                kept.append((spec, seq))
            elif action in remapped or owner[seq] in remapped:
                issues.append(
                    f"{path}: {action}: key {spec!r} is also bound to {owner[seq]}, which takes it"
                )
        final_specs[action] = tuple(s for s, _ in kept)
        final_keys[action] = tuple(q for _, q in kept)
    return Keymap(final_keys, final_specs, tuple(issues), path, remapped)


def _broken(path: Path, why: str) -> Keymap:
    return _resolve({}, (f"{path}: {why}",), path, frozenset())


def load_keymap(agent_dir: Path | None) -> Keymap:
    """The keymap of ``<agent_dir>/keybindings.json`` (the defaults when there is none)."""
    if agent_dir is None:
        return default_keymap()
    path = agent_dir / KEYBINDINGS_FILE
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return default_keymap()
    except (OSError, UnicodeDecodeError) as exc:
        return _broken(path, f"cannot be read, so no key is remapped: {exc}")
    try:
        raw = json.loads(text)
    except ValueError as exc:
        return _broken(path, f"not valid JSON, so no key is remapped: {exc}")
    if not isinstance(raw, dict):
        return _broken(path, "not a JSON object, so no key is remapped")
    problems: list[str] = []
    configured: dict[str, tuple[str, ...]] = {}
    for name, value in raw.items():
        if name == "$schema":
            continue
        action = _LEGACY_NAMES.get(name, name)
        if action != name and action in raw:
            continue  # the new id wins over the old name
        if action not in DEFAULT_KEYS:
            if action in PI_ONLY_ACTIONS:
                problems.append(f"{path}: {name}: pictx cannot remap this action; not applied")
            else:
                problems.append(f"{path}: {name}: unknown action; not applied")
            continue
        if isinstance(value, str):
            configured[action] = (value,)
        elif isinstance(value, list) and all(isinstance(v, str) for v in value):
            configured[action] = tuple(value)
        else:
            problems.append(f"{path}: {name}: a key or a list of keys expected; not applied")
    return _resolve(configured, problems, path, frozenset(configured))
