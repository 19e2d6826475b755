"""The model seam: what every caller of a model and every provider adapter agrees on.

:mod:`pi_context.model.protocol` defines :class:`Model` (a stream of events ending in one
:class:`StreamDone`), the request and its options; :mod:`pi_context.model.classify` turns a
provider's failure into a :class:`~pi_context.errors.ProviderError` kind;
:mod:`pi_context.model.thinking` says which thinking levels a model takes. This package sits
below compaction and the agent: both talk to models only through it, and the adapters in
:mod:`pi_context.providers` implement it.
"""

from pi_context import _lazy

__getattr__, __dir__ = _lazy.attach_stub(__name__, __file__)
