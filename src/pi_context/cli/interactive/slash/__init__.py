"""The slash commands typed at the interactive prompt (``/model``, ``/tree``, ``/resume``, ...).

One module per family of commands, each holding every form of its commands (the text form and
the picker form), registered with ``@BUILT_INS.command(...)``: :mod:`.session`, :mod:`.model`,
:mod:`.auth`, :mod:`.app`. :mod:`.registry` is the one registry: extension commands are
registered into it through the same ``register`` for the running session
(:func:`~.registry.commands_for`). Importing this package registers every built-in.
"""

from pi_context import _lazy
from pi_context.cli.interactive.slash import app, auth, model, session  # noqa: F401  (registers)

__getattr__, __dir__ = _lazy.attach_stub(__name__, __file__)
