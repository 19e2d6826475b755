"""The process-wide cache of loaded llama.cpp models, and their generation threads.

The GGUF is loaded once per process and per (file, context size, threads) and kept until exit,
so later requests and other :class:`~pi_context.providers.local.LocalModel` instances reuse it
and its evaluated prefix; requests to one loaded model run one at a time (its lock).
:func:`release_all` stops the generation threads and frees the models before interpreter
shutdown (registered with :mod:`atexit`): freeing a model under a running thread, or leaving
it to finalizers at teardown, crashes the process. At exit it also closes the two ``/dev/null``
files llama-cpp-python opens at import and never closes (with warnings on, ``python -X dev``,
every run that loaded the model ended with two unclosed-file warnings).
"""

from __future__ import annotations

import atexit
import importlib
import os
import sys
import threading
from pathlib import Path
from typing import Any

__all__ = [
    "THREADS_ENV",
    "default_threads",
    "load_model",
    "register_worker",
    "release_all",
    "stop_generations",
    "unregister_worker",
]

THREADS_ENV = "PICTX_LOCAL_THREADS"

_LOADED: dict[tuple[str, int, int], tuple[Any, threading.Lock]] = {}
"""Loaded models with the lock that keeps one generation at a time on each."""
_LOAD_LOCK = threading.Lock()


def default_threads() -> int:
    """``$PICTX_LOCAL_THREADS``, else 1 on machines with at most 2 cores, else half of them.

    llama.cpp's worker threads spin while they wait; on a small, busy machine a second thread
    makes a 135M model slower instead of faster (benchmarks/README.md, "Figures the code
    points to").
    """
    env = os.environ.get(THREADS_ENV, "")
    if env.isdigit() and int(env) > 0:
        return int(env)
    cores = os.cpu_count() or 1
    return 1 if cores <= 2 else min(4, cores // 2)


def load_model(path: Path, n_ctx: int, n_threads: int) -> tuple[Any, threading.Lock]:
    """The loaded model for this file, context size and thread count, with its lock."""
    key = (str(path), n_ctx, n_threads)
    with _LOAD_LOCK:
        loaded = _LOADED.get(key)
        if loaded is None:
            llama_module: Any = importlib.import_module("llama_cpp.llama")
            low: Any = importlib.import_module("llama_cpp.llama_cpp")

            # Extra buffer types (AMX/repacked weights) crash in VMs that advertise AMX but do
            # not grant it; for a 135M model they bring nothing, so they are turned off.
            original = low.llama_model_default_params

            def without_extra_buffers() -> Any:
                params = original()
                if hasattr(params, "use_extra_bufts"):
                    params.use_extra_bufts = False
                return params

            low.llama_model_default_params = without_extra_buffers
            try:
                llama = llama_module.Llama(
                    model_path=str(path),
                    n_ctx=n_ctx,
                    n_threads=n_threads,
                    n_threads_batch=n_threads,
                    n_batch=512,
                    seed=0,
                    verbose=False,
                )
            finally:
                low.llama_model_default_params = original
            loaded = _LOADED[key] = (llama, threading.Lock())
        return loaded


_WORKERS: dict[threading.Thread, threading.Event] = {}
"""Generation threads still running, each with the event that stops it at its next token."""
_WORKERS_LOCK = threading.Lock()
_STOP_WAIT_SECONDS = 30.0
"""How long :func:`release_all` waits for a worker (a prompt evaluation is not interruptible;
one token of a small model takes milliseconds, a long prompt a few seconds)."""


def stop_generations(timeout: float = _STOP_WAIT_SECONDS) -> bool:
    """Stop every running generation and wait for its thread; ``False`` if one is still busy."""
    with _WORKERS_LOCK:
        workers = list(_WORKERS.items())
    for _, stop in workers:
        stop.set()
    for thread, _ in workers:
        thread.join(timeout)
    return not any(thread.is_alive() for thread, _ in workers)


def release_all(timeout: float = _STOP_WAIT_SECONDS) -> None:
    """Stop running generations, then free every loaded model (before interpreter shutdown).

    Freeing a model while a worker still runs llama.cpp on it, or leaving it to finalizers at
    teardown, crashes the process (a segmentation fault instead of the exit code); a model
    whose worker did not stop in time is left loaded rather than freed under it.
    """
    stopped = stop_generations(timeout)
    with _LOAD_LOCK:
        for key, (llama, lock) in list(_LOADED.items()):
            if not lock.acquire(timeout=timeout if stopped else 0):
                continue
            try:
                llama.close()
            finally:
                lock.release()
            del _LOADED[key]


def register_worker(thread: threading.Thread, stop: threading.Event) -> None:
    """A generation thread starts: :func:`stop_generations` can stop it through ``stop``."""
    with _WORKERS_LOCK:
        _WORKERS[thread] = stop


def unregister_worker(thread: threading.Thread) -> None:
    """A generation thread is done."""
    with _WORKERS_LOCK:
        _WORKERS.pop(thread, None)


def _release_at_exit() -> None:
    """Free the models, then close llama-cpp-python's ``/dev/null`` files (it silences the C
    library with them while a model loads, so they stay open until no load can follow)."""
    release_all()
    utils = sys.modules.get("llama_cpp._utils")
    if utils is None:
        return
    with _LOAD_LOCK:
        for name in ("outnull_file", "errnull_file"):
            null = getattr(utils, name, None)
            if null is not None:
                null.close()


atexit.register(_release_at_exit)
