"""Running a ``codemode`` script in an embedded JavaScript engine (V8, through ``mini-racer``).

Each script gets a fresh V8 isolate that has no file system, network or process access; the
timers ``mini-racer`` adds are removed before the script runs, so the only way out of the
sandbox is one host function, and it is async on both sides: the script awaits it while the
agent's event loop runs the tool, nothing blocks a thread. The body starts after one
microtask, so even a script that loops forever before its first ``await`` never runs on the
caller's thread. The isolate is closed when the script ends, times out or is cancelled, which
terminates whatever it was still running. Memory is capped per isolate.

Why V8 and not QuickJS: the QuickJS bindings call Python synchronously and refuse a time limit
while Python functions are registered, so a busy loop could not be stopped; ``mini-racer``
awaits Python coroutines and terminates a running isolate on close.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = ["ScriptResult", "run_script"]

MEMORY_LIMIT_BYTES: Final = 256 * 1024 * 1024
DEFAULT_TIMEOUT_SECONDS: Final = 300.0

_PRELUDE: Final = r"""
for (const name of ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "__timer_manager"]) {
  try { Object.defineProperty(globalThis, name, { value: undefined, writable: false, configurable: false }); }
  catch (e) {}
}
globalThis.__start = (code, host) => {
  const outputs = [];
  const logs = [];
  const show = (v) => typeof v === "string" ? v : (v === undefined ? "undefined" : JSON.stringify(v, null, 2));
  const call = async (kind, payload) => {
    const answer = JSON.parse(await host(kind, JSON.stringify(payload === undefined ? null : payload)));
    if (answer.error !== undefined) throw new Error(answer.error);
    return answer.value;
  };
  globalThis.text = (value) => { outputs.push(show(value)); };
  const log = (...args) => { logs.push(args.map(show).join(" ")); };
  globalThis.console = { log, info: log, warn: log, error: log, debug: log };
  globalThis.tools = new Proxy({}, {
    get: (_target, name) => typeof name === "string"
      ? (args) => call("call", { name, args: args === undefined ? {} : args })
      : undefined,
  });
  globalThis.searchTools = (query, options) => call("search", { query, options: options || {} });
  globalThis.describeTool = async (name) => (await call("describe", { name })) ?? undefined;
  globalThis.describeNamespace = async (name) => (await call("namespace", { name })) ?? undefined;
  const AsyncFunction = (async function () {}).constructor;
  const finish = (done) => JSON.stringify({ done, outputs, logs });
  return (async () => {
    await null;  // the body runs as a microtask, never inside the caller's call
    globalThis.ALL_TOOLS = await call("all", null);
    let main;
    try { main = new AsyncFunction(code); }
    catch (e) { return finish({ ok: false, error: String(e) }); }
    try {
      const value = await main();
      if (value !== undefined) outputs.push(show(value));
      return finish({ ok: true });
    } catch (e) {
      return finish({ ok: false, error: String((e && e.message) || e) });
    }
  })();
};
"""


@dataclass
class ScriptResult:
    ok: bool
    outputs: list[str] = field(default_factory=list)
    logs: list[str] = field(default_factory=list)
    error: str | None = None


Host = Callable[[str, str], Awaitable[str]]


async def run_script(
    code: str, host: Host, *, timeout: float = DEFAULT_TIMEOUT_SECONDS
) -> ScriptResult:
    """Run ``code`` (the body of an async function) to its end. ``host(kind, payload_json)``
    answers ``call``, ``search``, ``describe``, ``namespace`` and ``all`` with JSON
    ``{"value": …}`` or ``{"error": "…"}``."""
    from py_mini_racer import MiniRacer  # V8 starts only when a script runs

    racer = MiniRacer()
    try:
        racer.set_hard_memory_limit(MEMORY_LIMIT_BYTES)
        racer.eval(_PRELUDE)

        async def bridge(*args: Any) -> str:
            kind, payload = str(args[0]), str(args[1])
            try:
                return await host(kind, payload)
            except Exception as exc:  # noqa: BLE001 - the script sees a rejected promise
                return json.dumps({"error": str(exc) or type(exc).__name__})

        async with racer.wrap_py_function(bridge) as js_bridge:
            start: Any = racer.eval("__start")
            promise = start(code, js_bridge)
            try:
                raw = await asyncio.wait_for(promise, timeout)
            except TimeoutError:
                return ScriptResult(False, error=f"Script timed out after {timeout:g} seconds")
    except Exception as exc:  # noqa: BLE001 - engine errors (memory limit) end the script
        return ScriptResult(False, error=str(exc) or type(exc).__name__)
    finally:
        racer.close()  # terminates anything the isolate still runs
    data: dict[str, Any] = json.loads(str(raw))
    done: dict[str, Any] = data.get("done") or {}
    outputs = [str(o) for o in data.get("outputs") or []]
    logs = [str(line) for line in data.get("logs") or []]
    if not done.get("ok"):
        return ScriptResult(False, outputs, logs, str(done.get("error")))
    return ScriptResult(True, outputs, logs)
