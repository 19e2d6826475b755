"""The package version, read by the build (``[tool.hatch.version]``) and by ``pictx --version``.

Kept in a module of its own so that ``pictx --version`` needs neither ``importlib.metadata``
(costly imports: benchmarks/README.md, "Start-up") nor anything else of the package.
"""

__version__ = "0.1.0"
