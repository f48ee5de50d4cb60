"""Drives `mend mcp` with the official Python MCP SDK client.

Usage: client.py MEND_BINARY WORKDIR [--bench]

Covers: initialize, tool listing and schemas, every tool, byte-exact file
contents, error paths (not found, ambiguous, outside the root, stale
version, binary file), and 20 concurrent edit_file calls on one file.
With --bench, times edit_file round trips on a 1,000-line file instead.
"""

import asyncio
import json
import os
import subprocess
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

MEND, WORK = sys.argv[1], sys.argv[2]
passed = failed = 0


def check(name, cond, detail=""):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print(f"FAIL {name}: {detail}", flush=True)


def write(rel, data: bytes):
    p = os.path.join(WORK, rel)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "wb") as f:
        f.write(data)


def read(rel):
    with open(os.path.join(WORK, rel), "rb") as f:
        return f.read()


def body(res):
    return res.content[0].text


async def call(s, tool, args):
    return await s.call_tool(tool, args)


async def tests(s):
    tools = await s.list_tools()
    names = {t.name for t in tools.tools}
    expected = {"read_file", "edit_file", "modify_file", "write_file", "apply_patch",
                "apply_edits", "checkpoint_create", "checkpoint_list", "checkpoint_restore"}
    check("tools listed", expected <= names, names)
    schemas = {t.name: t.input_schema for t in tools.tools}
    check("edit_file schema", "edits" in schemas["edit_file"]["properties"]
          and "expected_version" in schemas["edit_file"]["properties"], schemas["edit_file"])
    check("descriptions", all(t.description and len(t.description) > 40 for t in tools.tools))

    # read_file, then an edit on a CRLF file with the version.
    write("src/app.py", b"def main():\r\n    print('hi')\r\n    return 0\r\n")
    r = json.loads(body(await call(s, "read_file", {"path": "src/app.py"})))
    check("read content", r["content"] == "def main():\r\n    print('hi')\r\n    return 0\r\n", r)
    version = r["version"]
    part = json.loads(body(await call(s, "read_file", {"path": "src/app.py", "offset": 2, "limit": 1})))
    check("read offset/limit", part["content"] == "    print('hi')\r\n", part)
    res = await call(s, "edit_file", {"path": "src/app.py", "expected_version": version,
                                      "edits": [{"old_string": "print('hi')", "new_string": "print('hello')"}]})
    check("edit ok", not res.is_error, body(res))
    out = json.loads(body(res))
    check("edit diff", "+    print('hello')" in out["diff"], out)
    check("edit pass", out["edits"][0]["pass"] == "exact", out)
    check("crlf kept", read("src/app.py") == b"def main():\r\n    print('hello')\r\n    return 0\r\n", read("src/app.py"))
    new_version = out["versions"]["src/app.py"]

    # Stale version: the file changed since the read.
    write("src/app.py", b"def main():\r\n    print('changed by a human')\r\n    return 0\r\n")
    res = await call(s, "edit_file", {"path": "src/app.py", "expected_version": new_version,
                                      "edits": [{"old_string": "return 0", "new_string": "return 1"}]})
    check("stale refused", res.is_error and "changed since you read it" in body(res), body(res))
    check("stale shows diff", "+    print('changed by a human')" in body(res), body(res))
    check("stale not written", b"return 0" in read("src/app.py"))

    # Dry run.
    res = await call(s, "edit_file", {"path": "src/app.py", "dry_run": True,
                                      "edits": [{"old_string": "return 0", "new_string": "return 2"}]})
    check("dry run", not res.is_error and b"return 0" in read("src/app.py"), body(res))

    # Not found, ambiguous, outside the root, binary.
    res = await call(s, "edit_file", {"path": "nope.py", "edits": [{"old_string": "a", "new_string": "b"}]})
    check("not found", res.is_error and "File not found" in body(res), body(res))
    write("dup.py", b"x = 1\ny = 2\nx = 1\n")
    res = await call(s, "edit_file", {"path": "dup.py", "edits": [{"old_string": "x = 1", "new_string": "x = 3"}]})
    check("ambiguous", res.is_error and "lines 1 and 3" in body(res), body(res))
    res = await call(s, "edit_file", {"path": "../outside.txt", "edits": [{"old_string": "", "new_string": "x"}]})
    check("outside root", res.is_error and "outside the project root" in body(res), body(res))
    res = await call(s, "read_file", {"path": "/etc/passwd"})
    check("absolute outside", res.is_error, body(res))
    write("img.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR")
    res = await call(s, "edit_file", {"path": "img.png", "edits": [{"old_string": "PNG", "new_string": "JPG"}]})
    check("binary", res.is_error and "binary" in body(res), body(res))

    # modify_file, write_file, apply_patch, apply_edits.
    write("m.py", b"import os\n\ndef hello():\n    print('hi')\n\ndef goodbye():\n    pass\n")
    res = await call(s, "modify_file", {"path": "m.py", "changes": [
        {"start": ["def hello():"], "end": ["def goodbye():"],
         "content": ["def hello(name):", "    print(name)", "", "def goodbye():"]}]})
    check("modify_file", not res.is_error and read("m.py") == b"import os\n\ndef hello(name):\n    print(name)\n\ndef goodbye():\n    pass\n", body(res))
    res = await call(s, "write_file", {"path": "new/file.txt", "content": "fresh\n"})
    check("write_file", not res.is_error and read("new/file.txt") == b"fresh\n", body(res))
    patch = "*** Begin Patch\n*** Update File: m.py\n@@ def goodbye():\n-    pass\n+    return None\n*** Add File: added.txt\n+added\n*** End Patch\n"
    res = await call(s, "apply_patch", {"patch": patch})
    check("apply_patch", not res.is_error and b"return None" in read("m.py") and read("added.txt") == b"added\n", body(res))
    mixed = "Changes:\n\nadded.txt\n<<<<<<< SEARCH\nadded\n=======\nadded twice\n>>>>>>> REPLACE\n\n--- a/new/file.txt\n+++ b/new/file.txt\n@@ -1 +1 @@\n-fresh\n+fresher\n"
    res = await call(s, "apply_edits", {"text": mixed})
    check("apply_edits mixed", not res.is_error and read("added.txt") == b"added twice\n" and read("new/file.txt") == b"fresher\n", body(res))
    res = await call(s, "apply_edits", {"text": "just prose"})
    check("no edits", res.is_error and "no edits found" in body(res), body(res))

    # Checkpoints.
    res = await call(s, "checkpoint_create", {"label": "before", "anchor": "msg-1"})
    check("checkpoint_create", not res.is_error, body(res))
    cp = json.loads(body(res))
    write("added.txt", b"scribbled\n")
    lst = json.loads(body(await call(s, "checkpoint_list", {})))["checkpoints"]
    check("checkpoint_list", lst and lst[0]["id"] == cp["id"] and lst[0]["anchor"] == "msg-1", lst)
    res = await call(s, "checkpoint_restore", {"id": cp["id"]})
    check("checkpoint_restore", not res.is_error and read("added.txt") == b"added twice\n", body(res))

    # 20 concurrent edit_file calls on one file: all applied.
    write("shared.txt", "".join(f"line {i}\n" for i in range(20)).encode())
    results = await asyncio.gather(*[
        call(s, "edit_file", {"path": "shared.txt", "edits": [{"old_string": f"line {i}\n", "new_string": f"LINE {i} edited\n"}]})
        for i in range(20)])
    check("concurrent no errors", all(not r.is_error for r in results), [body(r) for r in results if r.is_error][:2])
    check("concurrent all applied", read("shared.txt") == "".join(f"LINE {i} edited\n" for i in range(20)).encode(), read("shared.txt"))


async def bench(s):
    write("big.txt", "".join(f"    let value_{i} = compute({i});\n" for i in range(1000)).encode())
    await call(s, "read_file", {"path": "big.txt", "limit": 1})
    n = 100
    t = time.perf_counter()
    for i in range(n):
        k = (i * 37) % 1000
        old = f"compute({k})" if i < 1000 else None
        res = await call(s, "edit_file", {"path": "big.txt", "edits": [{"old_string": f"value_{k} = compute({k})", "new_string": f"value_{k} = compute({k}) + 0"}]})
        assert not res.is_error, body(res)
    dt = (time.perf_counter() - t) / n
    print(f"edit_file round trip on a 1,000-line file: {dt * 1000:.2f} ms (mean of {n})")


async def main():
    params = StdioServerParameters(command=MEND, args=["mcp", "--root", WORK])
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            if "--bench" in sys.argv:
                await bench(s)
            else:
                await tests(s)
    if "--bench" not in sys.argv:
        print(f"mcp: {passed} passed, {failed} failed")
        sys.exit(1 if failed else 0)


asyncio.run(main())
