"""Runs MCP tool calls against `mend mcp` with the official Python SDK client.

Usage: call.py MEND_BINARY STEPS_JSON [SERVER_ARG...]

STEPS_JSON is a list of steps; each step is a list of calls made at the
same time, each {"tool": NAME, "args": {...}}. A step may instead be
"list" (list the tools). Prints one JSON object: {"steps": [[RESULT...]]},
where a call's RESULT is {"error": bool, "text": str, "structured": value
or null} (a JSON-RPC error
becomes {"error": true, "rpc": true, "text": message}) and a list step's is
{"tools": [names], "schemas": {name: schema}, "outputs": {name: output
schema or null}}.
"""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def one(session, call):
    try:
        res = await session.call_tool(call["tool"], call.get("args", {}))
    except Exception as e:  # a JSON-RPC error (McpError) and its kin
        return {"error": True, "rpc": True, "text": str(e)}
    text = "".join(c.text for c in res.content if getattr(c, "text", None) is not None)
    # The SDK's field names changed between versions.
    is_error = getattr(res, "is_error", getattr(res, "isError", None))
    structured = getattr(res, "structured_content", getattr(res, "structuredContent", None))
    return {"error": bool(is_error), "text": text, "structured": structured}


def schema(tool):
    return getattr(tool, "input_schema", getattr(tool, "inputSchema", None))


def output_schema(tool):
    return getattr(tool, "output_schema", getattr(tool, "outputSchema", None))


async def main():
    mend, steps = sys.argv[1], json.loads(sys.argv[2])
    params = StdioServerParameters(command=mend, args=["mcp", *sys.argv[3:]])
    out = []
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            for step in steps:
                if step == "list":
                    tools = (await session.list_tools()).tools
                    out.append([{"tools": [t.name for t in tools],
                                 "schemas": {t.name: schema(t) for t in tools},
                                 "outputs": {t.name: output_schema(t) for t in tools}}])
                    continue
                out.append(list(await asyncio.gather(*(one(session, c) for c in step))))
    print(json.dumps({"steps": out}))


asyncio.run(main())
