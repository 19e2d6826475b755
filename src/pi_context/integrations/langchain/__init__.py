"""pi's context engine as a LangChain v1 agent middleware (``pip install 'pi-context[langchain]'``).

::

    from pi_context.integrations.langchain import PiSummarizationMiddleware

    agent = create_agent(
        model, tools,
        middleware=[PiSummarizationMiddleware(
            session_file="agent.jsonl", context_window=128_000,
            file_tools={"read_file": ("read", "path"), "edit_file": ("edit", "path")},
        )],
    )

It takes the place of LangChain's ``SummarizationMiddleware`` and is on by default at pi's
threshold (LangChain's own never summarizes unless ``trigger=`` is set).
"""

from pi_context import _lazy
from pi_context.integrations import _extra

_extra.require("langchain.agents.middleware", "langchain", "LangChain (langchain, langgraph)")

__getattr__, __dir__ = _lazy.attach_stub(__name__, __file__)
