from .mode import run_rpc as run_rpc
from .mode import take_over_stdout as take_over_stdout

__all__: list[str]  # the names above, in ruff's order (_lazy.attach_stub)
