"""pi's themes for the interactive terminal: the ``theme`` setting picks pi's built-in ``dark``
or ``light`` palette, or a custom theme file in pi's format, and its color tokens become the
styles pictx prints with.

- no ``theme`` setting, or ``"system"``: the terminal's own ANSI colors, as before;
- ``"dark"``, ``"light"``: pi's built-in palettes;
- ``"<light>/<dark>"``: one of the two, by the terminal's background as the ``COLORFGBG``
  environment variable tells it (dark when it does not);
- any other name: the custom theme file whose ``name`` it is, from the trusted project's
  ``.pi/themes/``, then ``<agentDir>/themes/``, then installed packages' themes.

A theme file is JSON: ``name``, optional ``appearance``, ``vars`` (named colors that may refer to
each other) and ``colors`` (every color token pi's schema requires; five may be left out and
take another token's value). A color is ``#rgb``/``#rrggbb``, ``okhsl(H S% L%)``,
``oklch(L% C H)``, a 256-color index, a variable's name, or ``""`` for the terminal's default.

An unknown name or a bad file gives one warning naming the file and the problem, and the
``dark`` palette. The active custom theme is read again when its file changes (checked before
each prompt), and ``/reload`` applies a changed ``theme`` setting.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import orjson
from msgspec import Struct
from rich.console import Console
from rich.style import Style
from rich.syntax import ANSISyntaxTheme, SyntaxTheme
from rich.text import Text
from rich.theme import Theme

__all__ = [
    "BUILTIN_THEMES",
    "IGNORED_TOKENS",
    "REQUIRED_TOKENS",
    "ActiveTheme",
    "ThemeError",
    "ThemePalette",
    "active_theme",
    "apply_theme",
    "choose_theme",
    "code_theme",
    "load_theme_file",
    "refresh_theme",
    "show_warnings",
]

_OPTIONAL = {
    "scrollbarTrack": "muted",
    "scrollbarThumb": "text",
    "searchMatchBg": "selectedBg",
    "searchMatchText": "text",
    "thinkingMax": "thinkingXhigh",
}
REQUIRED_TOKENS = (
    "accent",
    "border",
    "borderAccent",
    "borderMuted",
    "success",
    "error",
    "warning",
    "muted",
    "dim",
    "text",
    "thinkingText",
    "selectedBg",
    "userMessageBg",
    "userMessageText",
    "customMessageBg",
    "customMessageText",
    "customMessageLabel",
    "toolPendingBg",
    "toolSuccessBg",
    "toolErrorBg",
    "toolTitle",
    "toolOutput",
    "mdHeading",
    "mdLink",
    "mdLinkUrl",
    "mdCode",
    "mdCodeBlock",
    "mdCodeBlockBorder",
    "mdQuote",
    "mdQuoteBorder",
    "mdHr",
    "mdListBullet",
    "toolDiffAdded",
    "toolDiffRemoved",
    "toolDiffContext",
    "syntaxComment",
    "syntaxKeyword",
    "syntaxFunction",
    "syntaxVariable",
    "syntaxString",
    "syntaxNumber",
    "syntaxType",
    "syntaxOperator",
    "syntaxPunctuation",
    "thinkingOff",
    "thinkingMinimal",
    "thinkingLow",
    "thinkingMedium",
    "thinkingHigh",
    "thinkingXhigh",
    "bashMode",
)
"""The tokens a theme file must define (pi's schema)."""
TOKENS = frozenset(REQUIRED_TOKENS) | frozenset(_OPTIONAL)
_TOP_LEVEL = frozenset({"$schema", "name", "appearance", "vars", "colors", "export"})

USED_TOKENS = [
    "text",
    "accent",
    "success",
    "error",
    "warning",
    "muted",
    "thinkingText",
    "mdHeading",
    "mdLink",
    "mdLinkUrl",
    "mdCode",
    "mdCodeBlock",
    "mdQuote",
    "mdHr",
    "mdListBullet",
    "syntaxComment",
    "syntaxKeyword",
    "syntaxFunction",
    "syntaxVariable",
    "syntaxString",
    "syntaxNumber",
    "syntaxType",
    "syntaxOperator",
    "syntaxPunctuation",
]
IGNORED_TOKENS = tuple(sorted(TOKENS - set(USED_TOKENS)))
"""The tokens pictx has no element for (borders, panel backgrounds, diffs, thinking levels...)."""

# pi 1.6.0's built-in palettes, its OKHSL values converted to sRGB (the tokens pictx uses)
_DARK = (
    "#dee0e1 #a798d7 #68b78d #ea7f81 #cd9a22 #9da5a9 #96a0a4 #cd9a22 #69add0 #9da5a9 #a798d7"
    " #68b78d #9da5a9 #9da5a9 #a798d7 #9da5a9 #69add0 #cd9a22 #5db3ba #de8d5a #68b78d #a798d7"
    " #9da5a9 #9da5a9"
)
_LIGHT = (
    "#3b3f41 #7459b4 #337e58 #c8253d #8f6802 #677176 #7c868c #8f6802 #2f7899 #677176 #7459b4"
    " #337e58 #677176 #677176 #7459b4 #677176 #2f7899 #8f6802 #287a81 #a45417 #337e58 #7459b4"
    " #677176 #677176"
)


class ThemeError(ValueError):
    """A theme file that cannot be used: the message names the problem."""


class ThemePalette(Struct, frozen=True):
    """A theme's colors as rich color strings, by pi token name."""

    name: str
    appearance: str
    colors: Mapping[str, str]
    path: str | None = None


BUILTIN_THEMES = {
    "dark": ThemePalette("dark", "dark", dict(zip(USED_TOKENS, _DARK.split(), strict=True))),
    "light": ThemePalette("light", "light", dict(zip(USED_TOKENS, _LIGHT.split(), strict=True))),
}

_NUMBER = r"([-+]?\d*\.?\d+)(%?)"
_OKHSL = re.compile(rf"^okhsl\(\s*{_NUMBER}(?:deg)?\s+{_NUMBER}\s+{_NUMBER}\s*\)$", re.I)
_OKLCH = re.compile(rf"^oklch\(\s*{_NUMBER}\s+{_NUMBER}\s+{_NUMBER}(?:deg)?\s*\)$", re.I)
_HEX = re.compile(r"^#([0-9a-f]{3}|[0-9a-f]{6})$", re.I)


def _fraction(number: str, percent: str) -> float:
    return float(number) / 100 if percent else float(number)


@lru_cache(maxsize=1)
def _color_class() -> Any:
    """coloraide's color class with OKHSL (imported only for a theme that needs it)."""
    from coloraide import Color as Base
    from coloraide.spaces.okhsl import Okhsl

    class Color(Base):
        pass

    Color.register(Okhsl())
    return Color


def _to_hex(space: str, coords: Sequence[float]) -> str:
    color = _color_class()(space, list(coords))
    return str(color.convert("srgb").fit("srgb").to_string(hex=True))


def _color(token: str, value: object) -> str:
    """One resolved color value as a rich color string."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ThemeError(f"color {token}: expected a string or a number, got {value!r}")
    if isinstance(value, int):
        if not 0 <= value <= 255:
            raise ThemeError(f"color {token}: {value} is not a 256-color index (0-255)")
        return f"color({value})"
    if value == "":
        return "default"
    if (match := _HEX.match(value)) is not None:
        digits = match.group(1)
        return "#" + ("".join(c * 2 for c in digits) if len(digits) == 3 else digits).lower()
    if (match := _OKHSL.match(value)) is not None:
        hue, _, sat, sat_pct, light, light_pct = match.groups()
        return _to_hex("okhsl", [float(hue), _fraction(sat, sat_pct), _fraction(light, light_pct)])
    if (match := _OKLCH.match(value)) is not None:
        light, light_pct, chroma, chroma_pct, hue, _ = match.groups()
        chroma_value = float(chroma) * 0.4 / 100 if chroma_pct else float(chroma)
        return _to_hex("oklch", [_fraction(light, light_pct), chroma_value, float(hue)])
    raise ThemeError(f"color {token}: {value!r} is not a color")


def _resolve(token: str, value: object, variables: Mapping[str, object]) -> object:
    seen: set[str] = set()
    while isinstance(value, str) and value and not value.startswith("#"):
        if value.lower().startswith(("okhsl(", "oklch(")):
            break
        if value in seen:
            raise ThemeError(f"color {token}: circular variable reference {value!r}")
        if value not in variables:
            raise ThemeError(f"color {token}: variable {value!r} is not defined in vars")
        seen.add(value)
        value = variables[value]
    return value


def parse_theme(data: object) -> ThemePalette:
    """A theme document (already JSON-decoded) as a palette; :class:`ThemeError` if invalid."""
    if not isinstance(data, dict) or not isinstance(data.get("colors"), dict):
        raise ThemeError('expected an object with a "colors" map')
    extra = sorted(set(data) - _TOP_LEVEL)
    if extra:
        raise ThemeError("unknown top-level field(s): " + ", ".join(extra))
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise ThemeError('"name" is required')
    if "/" in name or name == "system":
        raise ThemeError(f'"{name}" cannot be a theme name ("/" and "system" are reserved)')
    colors: dict[str, Any] = data["colors"]
    unknown = sorted(set(colors) - TOKENS)
    if unknown:
        raise ThemeError("unknown color token(s): " + ", ".join(unknown))
    missing = [t for t in REQUIRED_TOKENS if t not in colors]
    if missing:
        raise ThemeError("missing required color token(s): " + ", ".join(missing))
    variables = data.get("vars") or {}
    if not isinstance(variables, dict):
        raise ThemeError('"vars" must be an object')
    values = {t: _resolve(t, v, variables) for t, v in colors.items()}
    for token, fallback in _OPTIONAL.items():
        values.setdefault(token, values[fallback])
    resolved = {t: _color(t, values[t]) for t in USED_TOKENS}
    appearance = data.get("appearance")
    if appearance not in (None, "dark", "light"):
        raise ThemeError('"appearance" must be "dark" or "light"')
    return ThemePalette(name, appearance or "dark", resolved)


def load_theme_file(path: str) -> ThemePalette:
    """A theme file; :class:`ThemeError` names the problem (unreadable, not JSON, invalid)."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except OSError as exc:
        raise ThemeError(exc.strerror or str(exc)) from exc
    try:
        data = orjson.loads(raw.removeprefix(b"\xef\xbb\xbf"))
    except orjson.JSONDecodeError as exc:
        raise ThemeError(f"not valid JSON: {exc}") from exc
    palette = parse_theme(data)
    return ThemePalette(palette.name, palette.appearance, palette.colors, path)


def _theme_files(agent_dir: str, cwd: str, trusted: bool, extra: Sequence[str]) -> list[str]:
    """Candidate theme files in pi's order: trusted project, user, packages."""
    folders = ([os.path.join(cwd, ".pi", "themes")] if trusted else []) + [
        os.path.join(agent_dir, "themes")
    ]
    files: list[str] = []
    for folder in folders:
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        files += [
            os.path.join(folder, n)
            for n in names
            if n.endswith(".json")
            and not n.startswith(".")
            and os.path.isfile(os.path.join(folder, n))
        ]
    return files + list(extra)


def _terminal_is_light(env: Mapping[str, str]) -> bool:
    """``COLORFGBG``'s background index: 7 and 9-15 are light, the rest dark."""
    background = env.get("COLORFGBG", "").split(";")[-1].strip()
    if not background.isdigit() or len(background) > 2:
        return False
    index = int(background)
    return index == 7 or 9 <= index <= 15


def choose_theme(
    setting: object,
    *,
    agent_dir: str,
    cwd: str,
    trusted: bool,
    package_files: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
) -> tuple[ThemePalette | None, list[str]]:
    """The palette the ``theme`` setting names (``None``: the terminal's own colors) and the
    warnings to show (at most one)."""
    if setting is None or setting == "system":
        return None, []
    if not isinstance(setting, str) or not setting.strip():
        return BUILTIN_THEMES["dark"], [
            f"theme setting {setting!r} is not a theme name; using dark"
        ]
    name = setting.strip()
    if "/" in name:
        light, _, dark = name.partition("/")
        if not light.strip() or not dark.strip() or "/" in dark:
            return BUILTIN_THEMES["dark"], [f'theme "{name}" is not "<light>/<dark>"; using dark']
        light_terminal = _terminal_is_light(os.environ if env is None else env)
        name = (light if light_terminal else dark).strip()
    if name == "system":
        return None, []
    if name in BUILTIN_THEMES:
        return BUILTIN_THEMES[name], []
    bad: tuple[str, str] | None = None
    for path in _theme_files(agent_dir, cwd, trusted, package_files):
        try:
            palette = load_theme_file(path)
        except ThemeError as exc:
            if Path(path).stem == name and bad is None:
                bad = (path, str(exc))
            continue
        if palette.name == name:
            return palette, []
    if bad is not None:
        return BUILTIN_THEMES["dark"], [f"theme {bad[0]}: {bad[1]}; using dark"]
    where = os.path.join(agent_dir, "themes")
    return BUILTIN_THEMES["dark"], [
        f'unknown theme "{name}" (no such theme in {where}); using dark'
    ]


# --------------------------------------------------------------------------- rich styles


def rich_theme(palette: ThemePalette) -> Theme:
    """pictx's style names (the plain ones its output uses, rich's Markdown ones) in the
    palette's colors."""
    c = palette.colors
    heading = Style(color=c["mdHeading"], bold=True)
    styles: dict[str, Style] = {
        "red": Style(color=c["error"]),
        "yellow": Style(color=c["warning"]),
        "green": Style(color=c["success"]),
        "cyan": Style(color=c["accent"]),
        "dim": Style(color=c["muted"]),
        "dim italic": Style(color=c["thinkingText"], italic=True),
        "bold": Style(color=c["text"], bold=True),
        "markdown.code": Style(color=c["mdCode"], bold=True),
        "markdown.code_block": Style(color=c["mdCodeBlock"]),
        "markdown.block_quote": Style(color=c["mdQuote"]),
        "markdown.hr": Style(color=c["mdHr"]),
        "markdown.item.bullet": Style(color=c["mdListBullet"], bold=True),
        "markdown.item.number": Style(color=c["mdListBullet"], bold=True),
        "markdown.link": Style(color=c["mdLink"]),
        "markdown.link_url": Style(color=c["mdLinkUrl"], underline=True),
    }
    styles.update({f"markdown.h{level}": heading for level in range(1, 7)})
    return Theme(styles)


def syntax_theme(palette: ThemePalette) -> SyntaxTheme:
    """Code blocks in the palette's syntax colors (no background of their own)."""
    from pygments import token as t  # type: ignore[import-untyped]

    c = palette.colors
    return ANSISyntaxTheme(
        {
            t.Token: Style(color=c["mdCodeBlock"]),
            t.Comment: Style(color=c["syntaxComment"], italic=True),
            t.Keyword: Style(color=c["syntaxKeyword"]),
            t.Keyword.Type: Style(color=c["syntaxType"]),
            t.Name.Function: Style(color=c["syntaxFunction"]),
            t.Name.Class: Style(color=c["syntaxType"]),
            t.Name.Builtin: Style(color=c["syntaxFunction"]),
            t.Name.Variable: Style(color=c["syntaxVariable"]),
            t.Name: Style(color=c["syntaxVariable"]),
            t.String: Style(color=c["syntaxString"]),
            t.Number: Style(color=c["syntaxNumber"]),
            t.Operator: Style(color=c["syntaxOperator"]),
            t.Punctuation: Style(color=c["syntaxPunctuation"]),
        }
    )


class ActiveTheme(Struct):
    """The theme a console shows, and the file it was read from (watched for changes)."""

    palette: ThemePalette | None
    mtime: float | None = None
    pushed: bool = False


_KEY = "pictx_theme"
"""Where a console keeps its :class:`ActiveTheme`."""


def active_theme(console: Console) -> ActiveTheme | None:
    found = console.__dict__.get(_KEY)
    return found if isinstance(found, ActiveTheme) else None


def _mtime(path: str | None) -> float | None:
    if path is None:
        return None
    try:
        return os.stat(path).st_mtime
    except OSError:
        return None


def _install(console: Console, palette: ThemePalette | None) -> None:
    before = active_theme(console)
    if before is not None and before.pushed:
        console.pop_theme()
    if palette is not None:
        console.push_theme(rich_theme(palette))
    console.__dict__[_KEY] = ActiveTheme(
        palette, _mtime(palette.path if palette else None), palette is not None
    )


def _session_inputs(agent: object) -> tuple[object, str, str, bool, list[str]]:
    """``(theme setting, agent dir, cwd, trusted, package theme files)`` of a running session
    (a host that does not tell: no setting)."""
    settings_of = getattr(agent, "settings_data", None)
    settings = settings_of() if callable(settings_of) else {}
    setting = settings.get("theme") if isinstance(settings, Mapping) else None
    if setting is None:
        return None, "", "", False, []
    agent_dir = str(getattr(agent, "agent_dir", ""))
    cwd = str(getattr(agent, "cwd", ""))
    trust_of = getattr(agent, "project_trust", None)
    trusted = bool(trust_of().decision.trusted) if callable(trust_of) else False
    packages_of = getattr(agent, "package_themes", None)
    packages = list(packages_of()) if callable(packages_of) else []
    return setting, agent_dir, cwd, trusted, packages


def apply_theme(console: Console, agent: object) -> list[str]:
    """Give ``console`` the theme the session's ``theme`` setting names (at start-up and on
    ``/reload``); the warnings to show."""
    setting, agent_dir, cwd, trusted, packages = _session_inputs(agent)
    palette, warnings = choose_theme(
        setting, agent_dir=agent_dir, cwd=cwd, trusted=trusted, package_files=packages
    )
    _install(console, palette)
    return warnings


def refresh_theme(console: Console) -> list[str]:
    """Read the active custom theme again when its file changed (pi's hot reload); a file now
    invalid keeps the theme shown and says why, once."""
    active = active_theme(console)
    palette = active.palette if active is not None else None
    if active is None or palette is None or palette.path is None:
        return []
    mtime = _mtime(palette.path)
    if mtime is None or mtime == active.mtime:
        return []
    try:
        fresh = load_theme_file(palette.path)
    except ThemeError as exc:
        active.mtime = mtime
        return [f"theme {palette.path}: {exc}; the theme shown is unchanged"]
    _install(console, fresh)
    return []


def code_theme(console: Console) -> str | SyntaxTheme:
    """The code-block theme of ``console``: the active palette's, else rich's default."""
    active = active_theme(console)
    if active is None or active.palette is None:
        return "monokai"
    return syntax_theme(active.palette)


def show_warnings(console: Console, warnings: Sequence[str]) -> None:
    for warning in warnings:
        console.print(Text(f"pictx: warning: {warning}", style="yellow"), soft_wrap=True)
