"""Keyword arguments checked when given: a typo is a ``TypeError`` that names the closest option.

Public constructors take many optional keywords. A misspelt one (``sesion_file=``) must fail at
the call, naming the keyword and the one that was probably meant, instead of being ignored (an
``**options`` catch-all swallows it) or reported without a hint (Python's own message).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Collection, Iterable
from typing import Any, TypeVar

__all__ = ["check_keywords", "keyword_checked", "unknown_keyword_error"]

_C = TypeVar("_C", bound=type)


def unknown_keyword_error(where: str, name: str, known: Collection[str]) -> TypeError:
    """The error for ``name`` given to ``where``, with the closest of ``known`` (or the list)."""
    import difflib  # on a mistake only

    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    if close:
        hint = f"; did you mean {close[0]!r}?"
    else:
        hint = f"; it takes {', '.join(sorted(known))}" if known else "; it takes none"
    return TypeError(f"{where}() got an unexpected keyword argument {name!r}{hint}")


def check_keywords(where: str, given: Iterable[str], known: Collection[str]) -> None:
    """Raise :func:`unknown_keyword_error` for the first of ``given`` not in ``known``."""
    for name in given:
        if name not in known:
            raise unknown_keyword_error(where, name, known)


def keyword_checked(cls: _C) -> _C:
    """Class decorator: ``cls(...)`` checks its keyword arguments against ``__init__``'s
    parameters first, so that a typo names the closest parameter."""
    init: Callable[..., None] = cls.__init__  # type: ignore[misc]
    params = inspect.signature(init).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        raise TypeError(f"{cls.__name__}.__init__ takes **kwargs: check them in the body")
    known = frozenset(
        name
        for name, p in params.items()
        if name != "self" and p.kind is not inspect.Parameter.POSITIONAL_ONLY
    )
    where = cls.__name__

    @functools.wraps(init)
    def checked(self: Any, *args: Any, **kwargs: Any) -> None:
        check_keywords(where, kwargs, known)
        init(self, *args, **kwargs)

    cls.__init__ = checked  # type: ignore[misc]
    return cls
