"""pi's context engine as a pydantic-ai v2 capability (``pip install 'pi-context[pydantic-ai]'``).

::

    from pi_context.integrations.pydantic_ai import PiContext

    agent = Agent(model, capabilities=[PiContext(session_file="agent.jsonl",
                                                 context_window=128_000,
                                                 file_tools={"read_file": ("read", "path")})])

``history_processors=`` no longer exists in pydantic-ai v2; ``PiContext(...).process`` is the
plain-function form for ``ProcessHistory``.
"""

from pi_context import _lazy
from pi_context.integrations import _extra

_extra.require("pydantic_ai.capabilities", "pydantic-ai", "pydantic-ai")

__getattr__, __dir__ = _lazy.attach_stub(__name__, __file__)
