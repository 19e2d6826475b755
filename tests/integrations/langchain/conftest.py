"""LangChain is an optional extra: these tests run where it is installed (the dev extra)."""

import pytest

pytest.importorskip("langchain.agents.middleware")
