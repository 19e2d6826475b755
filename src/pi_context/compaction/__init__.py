"""Compaction and branch summaries (pi 1.6.0's engine, plus an offline summarizer, observation
masking and a guard).

Typical use by an agent loop::

    compactor = Compactor(session, model, settings, on_event=forward)
    await compactor.maybe_compact(model.info.context_window)   # after each turn
    await compactor.compact("focus on the parser")              # /compact

Lower-level pieces mirror pi's functions: :func:`prepare_compaction`, :func:`find_cut_point`,
:func:`serialize_conversation`, :func:`estimate_context_tokens`, :func:`should_compact`,
:func:`summarize_branch`; the steps inside them are in their modules (:mod:`.cut_points`,
:mod:`.branch`, :mod:`.accounting`, ...).
"""

from pi_context import _lazy

__getattr__, __dir__ = _lazy.attach_stub(__name__, __file__)
