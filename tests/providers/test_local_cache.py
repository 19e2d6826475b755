"""The process-wide cache of loaded llama.cpp models: what a process that loaded one leaves at exit."""

from __future__ import annotations

import subprocess
import sys

import pytest

from pi_context.providers.local_discovery import local_available


def _run_dev(code: str) -> subprocess.CompletedProcess[str]:
    """``code`` in a fresh interpreter in development mode (every warning shown, also at exit)."""
    return subprocess.run(
        [sys.executable, "-X", "dev", "-c", code],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


@pytest.mark.local_model
@pytest.mark.skipif(not local_available()[0], reason=local_available()[1] or "available")
def test_a_process_that_loaded_the_model_exits_without_leaking_files() -> None:
    done = _run_dev(
        "from pi_context.providers.local_discovery import find_gguf\n"
        "from pi_context.providers.local_cache import load_model\n"
        "path = find_gguf()\n"
        "assert path is not None\n"
        "load_model(path, 256, 1)\n"
        "print('loaded')\n"
    )
    assert (done.returncode, done.stdout) == (0, "loaded\n"), done.stderr
    assert "ResourceWarning" not in done.stderr


def test_checking_whether_the_model_can_run_does_not_load_llama_cpp() -> None:
    done = _run_dev(
        "import sys\n"
        "from pi_context.providers.local_discovery import local_available\n"
        "local_available()\n"
        "print('llama_cpp' in sys.modules)\n"
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "False\n", "")
