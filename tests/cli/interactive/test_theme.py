"""pi's themes in pictx's terminal: which palette the ``theme`` setting picks, how a custom
theme file is read (pi's format), what a bad one gives, and the colors rich then prints."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from rich.console import Console
from rich.text import Text

from pi_context.cli.interactive.theme import (
    BUILTIN_THEMES,
    IGNORED_TOKENS,
    REQUIRED_TOKENS,
    ThemeError,
    active_theme,
    apply_theme,
    choose_theme,
    code_theme,
    load_theme_file,
    parse_theme,
    refresh_theme,
)


def _theme(name: str = "sea", **colors: Any) -> dict[str, Any]:
    base: dict[str, Any] = dict.fromkeys(
        REQUIRED_TOKENS, "ink"
    )  # a complete theme, most tokens through one variable
    base.update(colors)
    return {"name": name, "vars": {"ink": "#123", "alarm": "okhsl(20 91% 47%)"}, "colors": base}


def _write_theme(folder: Path, data: object, stem: str = "sea") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{stem}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _choose(tmp_path: Path, setting: object, **kw: Any) -> tuple[Any, list[str]]:
    kw.setdefault("trusted", False)
    kw.setdefault("env", {})
    return choose_theme(setting, agent_dir=str(tmp_path / "agent"), cwd=str(tmp_path), **kw)


def test_pi_okhsl_colors_convert_to_the_srgb_pi_prints() -> None:
    # pi 1.6.0's light theme: text okhsl(225 5% 27%) -> #3b3f41, error okhsl(20 91% 47%) -> #c8253d
    palette = parse_theme(_theme(text="okhsl(225 5% 27%)", error="alarm"))
    assert palette.colors["text"] == "#3b3f41"
    assert palette.colors["error"] == "#c8253d"
    assert palette.colors["accent"] == "#112233"
    assert BUILTIN_THEMES["light"].colors["text"] == "#3b3f41"
    assert BUILTIN_THEMES["light"].colors["error"] == "#c8253d"


def test_color_forms() -> None:
    palette = parse_theme(_theme(accent=39, text="", mdLink="oklch(62% 0.1 200)"))
    assert palette.colors["accent"] == "color(39)"
    assert palette.colors["text"] == "default"
    assert palette.colors["mdLink"].startswith("#")


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ({"name": "x"}, '"colors" map'),
        ({**_theme(), "extra": 1}, "unknown top-level field(s): extra"),
        (_theme(borderGlow="ink"), "unknown color token(s): borderGlow"),
        ({"name": "x", "colors": {"accent": "#fff"}}, "missing required color token(s): border"),
        (_theme(accent="nowhere"), "variable 'nowhere' is not defined"),
        ({**_theme(), "vars": {"ink": "ink2", "ink2": "ink"}}, "circular variable reference"),
        (_theme(accent="#12345"), "is not a color"),
        (_theme(name="a/b"), "reserved"),
        (_theme(accent=300), "not a 256-color index"),
    ],
)
def test_a_bad_theme_names_its_problem(data: dict[str, Any], problem: str) -> None:
    with pytest.raises(ThemeError, match=problem.replace("(", r"\(").replace(")", r"\)")):
        parse_theme(data)


def test_no_setting_or_system_keeps_the_terminals_own_colors(tmp_path: Path) -> None:
    assert _choose(tmp_path, None) == (None, [])
    assert _choose(tmp_path, "system") == (None, [])


def test_builtin_names_and_the_light_dark_pair(tmp_path: Path) -> None:
    assert _choose(tmp_path, "light") == (BUILTIN_THEMES["light"], [])
    assert _choose(tmp_path, "dark") == (BUILTIN_THEMES["dark"], [])
    pair = "light/dark"
    assert _choose(tmp_path, pair, env={"COLORFGBG": "0;15"})[0] is BUILTIN_THEMES["light"]
    assert _choose(tmp_path, pair, env={"COLORFGBG": "15;0"})[0] is BUILTIN_THEMES["dark"]
    assert _choose(tmp_path, pair, env={})[0] is BUILTIN_THEMES["dark"]


def test_custom_themes_by_name_project_ones_only_when_trusted(tmp_path: Path) -> None:
    user = _write_theme(tmp_path / "agent" / "themes", _theme(accent="#00ff00"))
    project = _write_theme(tmp_path / ".pi" / "themes", _theme(accent="#ff0000"))
    palette, warnings = _choose(tmp_path, "sea")
    assert (palette.path, palette.colors["accent"], warnings) == (str(user), "#00ff00", [])
    palette, _ = _choose(tmp_path, "sea", trusted=True)
    assert palette.path == str(project)
    package = _write_theme(tmp_path / "pkg", _theme("reef"), stem="anything")
    palette, _ = _choose(tmp_path, "reef", package_files=[str(package)])
    assert palette.path == str(package)


def test_unknown_name_and_bad_file_warn_once_and_fall_back_to_dark(tmp_path: Path) -> None:
    palette, warnings = _choose(tmp_path, "nosuch")
    assert palette is BUILTIN_THEMES["dark"]
    (warning,) = warnings
    assert '"nosuch"' in warning
    bad = tmp_path / "agent" / "themes" / "broken.json"
    bad.parent.mkdir(parents=True)
    bad.write_text("{not json", encoding="utf-8")
    palette, warnings = _choose(tmp_path, "broken")
    assert palette is BUILTIN_THEMES["dark"]
    (warning,) = warnings
    assert warning.startswith(f"theme {bad}: not valid JSON")


def _rendered(console: Console, style: str) -> str:
    console.print(Text("word", style=style))
    file = console.file
    assert isinstance(file, io.StringIO)
    return file.getvalue()


def _console() -> Console:
    return Console(file=io.StringIO(), force_terminal=True, color_system="truecolor")


def _agent(tmp_path: Path, theme: object) -> SimpleNamespace:
    trust = SimpleNamespace(decision=SimpleNamespace(trusted=False))
    return SimpleNamespace(
        settings_data=lambda: {"theme": theme},
        agent_dir=tmp_path / "agent",
        cwd=str(tmp_path),
        project_trust=lambda: trust,
    )


def test_the_light_theme_colors_what_pictx_prints(tmp_path: Path) -> None:
    console = _console()
    assert apply_theme(console, _agent(tmp_path, "light")) == []
    assert "\x1b[38;2;200;37;61mword" in _rendered(console, "red")  # error #c8253d
    console = _console()
    apply_theme(console, _agent(tmp_path, "light"))
    assert "\x1b[38;2;103;113;118mword" in _rendered(console, "dim")  # muted #677176
    plain = _console()
    assert apply_theme(plain, SimpleNamespace()) == []
    assert "\x1b[31mword" in _rendered(plain, "red")  # no setting: the terminal's own red
    assert code_theme(plain) == "monokai"


def test_reload_switches_and_a_changed_file_is_read_again(tmp_path: Path) -> None:
    path = _write_theme(tmp_path / "agent" / "themes", _theme(error="#ff0000"))
    console = _console()
    apply_theme(console, _agent(tmp_path, "sea"))
    assert "\x1b[38;2;255;0;0mword" in _rendered(console, "red")
    path.write_text(json.dumps(_theme(error="#00ff00")), encoding="utf-8")
    os.utime(path, (1, 1))
    assert refresh_theme(console) == []
    console.file = io.StringIO()
    assert "\x1b[38;2;0;255;0mword" in _rendered(console, "red")
    path.write_text("{", encoding="utf-8")
    os.utime(path, (2, 2))
    (warning,) = refresh_theme(console)
    assert "the theme shown is unchanged" in warning
    assert refresh_theme(console) == []  # said once
    apply_theme(console, _agent(tmp_path, None))  # /reload without the setting
    active = active_theme(console)
    assert active is not None
    assert active.palette is None
    console.file = io.StringIO()
    assert "\x1b[31mword" in _rendered(console, "red")


def test_the_ignored_tokens_are_named_in_the_compatibility_doc() -> None:
    doc = (Path(__file__).parents[3] / "docs" / "compatibility.md").read_text(encoding="utf-8")
    missing = [token for token in IGNORED_TOKENS if f"`{token}`" not in doc]
    assert missing == []


def test_load_theme_file_names_an_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(ThemeError):
        load_theme_file(str(tmp_path / "absent.json"))


def test_markdown_and_code_blocks_take_the_palettes_colors(tmp_path: Path) -> None:
    from rich.markdown import Markdown

    console = _console()
    apply_theme(console, _agent(tmp_path, "light"))
    text = "# Title\n\n```python\ndef f():\n    return 1\n```\n"
    console.print(Markdown(text, code_theme=code_theme(console)))  # type: ignore[arg-type]
    file = console.file
    assert isinstance(file, io.StringIO)
    shown = file.getvalue()
    assert "38;2;143;104;2mTitle" in shown  # mdHeading #8f6802
    assert "\x1b[38;2;47;120;153mdef" in shown  # syntaxKeyword #2f7899
    assert "48;" not in shown  # no background of its own on a light terminal
