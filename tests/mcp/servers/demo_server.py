"""A small MCP server for the tests, built with the official SDK.

Run as ``python demo_server.py [stdio|http PORT]`` (``DEMO_NAME`` names it). Its tools: ``echo`` (text),
``weather`` (structured content), ``big`` (a long text), ``fail`` (an error result),
``slow`` (reports progress), ``log`` (a log message), ``crash`` (ends the process),
``grow`` (adds a tool and tells the client the list changed); resources ``notes`` and
``data``. The environment variable ``DEMO_INSTRUCTIONS`` sets its instructions and
``DEMO_STDERR`` is written to stderr at start; ``DEMO_WAIT_FILE`` delays the start until that
file exists and ``DEMO_EXIT`` exits at once with that status.
"""

from __future__ import annotations

import asyncio
import os
import sys

from mcp.server.mcpserver import Context, MCPServer

NAME = os.environ.get("DEMO_NAME", "demo")
if os.environ.get("DEMO_STDERR"):
    print(os.environ["DEMO_STDERR"], file=sys.stderr, flush=True)
if os.environ.get("DEMO_WAIT_FILE"):  # start only once the test creates this file
    import time

    while not os.path.exists(os.environ["DEMO_WAIT_FILE"]):
        time.sleep(0.05)
if os.environ.get("DEMO_EXIT"):
    sys.exit(int(os.environ["DEMO_EXIT"]))

server = MCPServer(
    NAME, instructions=os.environ.get("DEMO_INSTRUCTIONS", f"Demo server {NAME} for the tests.")
)


@server.tool(description="Echo the given text back")
def echo(text: str) -> str:
    return f"echo: {text}"


@server.tool(description="Current weather for a city")
def weather(city: str) -> dict[str, object]:
    return {"city": city, "temp_c": 21}


@server.tool(description="A long text of numbered lines")
def big(lines: int = 2000) -> str:
    return "\n".join(f"line {i:05d} " + "x" * 20 for i in range(lines))


@server.tool(description="Always fails")
def fail() -> str:
    raise ValueError("it failed on purpose")


@server.tool(description="Reports progress, then answers")
async def slow(steps: int, ctx: Context, delay: float = 0.3) -> str:
    for i in range(steps):
        await asyncio.sleep(delay)
        await ctx.report_progress(i + 1, steps, f"step {i + 1}")
    return f"done after {steps} steps"


@server.tool(description="Writes a log message")
async def log(ctx: Context) -> str:
    await ctx.info("a log message from the tool")
    return "logged"


@server.tool(description="Ends the server process")
def crash() -> str:
    os._exit(3)


@server.tool(description="Adds the tool extra")
async def grow(ctx: Context) -> str:
    @server.tool(description="A tool added later")
    def extra() -> str:
        return "extra"

    await ctx.session.send_tool_list_changed()
    return "grown"


@server.resource(
    "file:///notes.txt", name="notes", description="Some notes", mime_type="text/plain"
)
def notes() -> str:
    return "the notes"


@server.resource("file:///data.bin", name="data", mime_type="application/octet-stream")
def data() -> bytes:
    return b"\x00\x01\x02binary"


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "http":
        import uvicorn

        app = server.streamable_http_app()
        uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
    else:
        server.run("stdio")
