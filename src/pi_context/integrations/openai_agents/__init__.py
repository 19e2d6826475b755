"""pi's context engine as an openai-agents session (``pip install 'pi-context[openai-agents]'``).

::

    from pi_context.integrations.openai_agents import PiSession

    session = PiSession(session_file="agent.jsonl", context_window=128_000,
                        file_tools={"read_file": ("read", "path")})
    result = await Runner.run(agent, "task", session=session,
                              run_config=RunConfig(call_model_input_filter=session.input_filter))
"""

from pi_context import _lazy
from pi_context.integrations import _extra

_extra.require("agents.memory", "openai-agents", "openai-agents")

__getattr__, __dir__ = _lazy.attach_stub(__name__, __file__)
