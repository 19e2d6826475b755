"""The application every front end shares: what interactive, print and RPC mode have in common.

Configuration (``AppConfig``), which model and which session a run uses, the saved settings,
file arguments, and ``AppAgent``, the seam through which the front ends reach the agent. Nothing
here draws on a terminal.
"""
