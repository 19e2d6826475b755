from .registry import commands_for as commands_for
from .registry import parse_slash as parse_slash
from .registry import run_slash as run_slash

__all__: list[str]  # the names above, in ruff's order (_lazy.attach_stub)
