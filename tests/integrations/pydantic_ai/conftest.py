"""pydantic-ai is an optional extra: these tests run where it is installed (the dev extra)."""

import pytest

pytest.importorskip("pydantic_ai.capabilities")
