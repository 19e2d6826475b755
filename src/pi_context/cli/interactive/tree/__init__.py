"""``/tree``: navigating the session tree from the interactive UI.

``view`` computes the rows, filters, search and folds without a terminal; ``selector`` draws
them full screen; ``command`` runs the flow from the selection to the move.
"""
