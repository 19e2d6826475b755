"""A LangChain fake chat model that agents with tools accept.

LangChain's fakes raise ``NotImplementedError`` from ``bind_tools``, so ``create_agent`` with
tools cannot use them as they are; this one binds tools by ignoring them.
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

__all__ = ["FakeToolChatModel"]


class FakeToolChatModel(GenericFakeChatModel):
    """``GenericFakeChatModel`` whose ``bind_tools`` returns the model itself."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> FakeToolChatModel:
        return self
