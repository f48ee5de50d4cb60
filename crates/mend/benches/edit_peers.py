"""One edit of a 1,000-line Python file, as an agent's tool call costs it:
a warm MCP `edit_file` through `mend mcp` (syntax check on, the default,
and `--syntax=off`) against the official MCP filesystem server, the same
Python MCP SDK client calling each in turn; then `mend apply --dry-run`
processes with and without the syntax check, alternating. Medians.

Usage:
    cargo build --release -p mend
    python3 crates/mend/benches/edit_peers.py target/release/mend [--rounds N]

Needs the `mcp` Python package and Node.js; the filesystem server is
installed with npm into target/mcp-bench on first use.
"""

import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import AsyncExitStack

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

MEND = os.path.abspath(sys.argv[1])
ROUNDS = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 200
HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = os.path.join(HERE, "..", "..", "..", "target", "mcp-bench")
FS_SERVER = os.path.join(
    CACHE, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js"
)


def source():
    """About 1,000 lines of ordinary Python: 111 functions and a last line."""
    out = []
    k = 0
    while len(out) < 999:
        out += [
            f"def handler_{k}(request, limit=10):",
            f'    """Return the summary of request {k}."""',
            f"    items = fetch(request.path, limit, {k})",
            "    if not items:",
            "        return None",
            "    total = sum(x.size for x in items)",
            f'    return {{"count": len(items), "total": total, "name": "h{k}"}}',
            "",
            "",
        ]
        k += 1
    return "\n".join(out[:999]) + "\n# end\n", k


TEXT, FUNCTIONS = source()


def edit_of(state, key, i):
    """The i-th edit of a file: one function's call changed, or changed
    back, so the file stays valid Python and every edit changes it."""
    k = (i * 37) % FUNCTIONS
    seen = state.setdefault(key, set())
    a = f"fetch(request.path, limit, {k})"
    b = f"fetch(request.path, limit + 1, {k})"
    old, new = (b, a) if k in seen else (a, b)
    seen.symmetric_difference_update({k})
    return old, new


def install_fs_server():
    if not os.path.exists(FS_SERVER):
        os.makedirs(CACHE, exist_ok=True)
        subprocess.run(
            ["npm", "i", "--silent", "--no-audit", "--no-fund", "@modelcontextprotocol/server-filesystem"],
            cwd=CACHE,
            check=True,
        )


async def mcp_rounds(work, env):
    servers = {
        "mend mcp": ([MEND, "mcp", "--root"], "mend", {}),
        "mend mcp --syntax=off": ([MEND, "mcp", "--syntax", "off", "--root"], "mend", {}),
        "MCP filesystem server": (["node", FS_SERVER], "fs", {}),
    }
    times = {name: [] for name in servers}
    state = {}
    async with AsyncExitStack() as stack:
        sessions = {}
        for name, (cmd, kind, _) in servers.items():
            root = os.path.join(work, kind + str(len(sessions)))
            os.makedirs(root)
            with open(os.path.join(root, "app.py"), "w") as f:
                f.write(TEXT)
            params = StdioServerParameters(command=cmd[0], args=cmd[1:] + [root], env=env)
            r, w = await stack.enter_async_context(stdio_client(params))
            s = await stack.enter_async_context(ClientSession(r, w))
            await s.initialize()
            sessions[name] = (s, kind, root)

        async def call(name, i):
            s, kind, root = sessions[name]
            old, new = edit_of(state, name, i)
            if kind == "mend":
                args = {"path": "app.py", "edits": [{"old_string": old, "new_string": new}]}
            else:
                args = {"path": os.path.join(root, "app.py"), "edits": [{"oldText": old, "newText": new}]}
            t = time.perf_counter()
            res = await s.call_tool("edit_file", args)
            dt = time.perf_counter() - t
            assert not res.is_error, (name, res.content)
            return dt

        names = list(servers)
        for i in range(10):  # warm up every server
            for name in names:
                await call(name, i)
        for i in range(10, 10 + ROUNDS):
            # Each round starts with another server, so none always follows
            # the same one.
            order = names[i % 3 :] + names[: i % 3]
            for name in order:
                times[name].append(await call(name, i))
        for name, (s, kind, root) in sessions.items():
            with open(os.path.join(root, "app.py")) as f:
                text = f.read()
            assert text.count("limit + 1") == len(state[name]), name
    return times


def cli_rounds(work, env):
    root = os.path.join(work, "cli")
    os.makedirs(root)
    with open(os.path.join(root, "app.py"), "w") as f:
        f.write(TEXT)
    # SEARCH/REPLACE quotes whole lines.
    old, new = (f"    items = {t}" for t in edit_of({}, "cli", 1))
    response = os.path.join(work, "edit.txt")
    with open(response, "w") as f:
        f.write(f"app.py\n<<<<<<< SEARCH\n{old}\n=======\n{new}\n>>>>>>> REPLACE\n")
    runs = {
        "mend apply --dry-run": [],
        "mend apply --dry-run --syntax=off": [],
    }
    names = list(runs)
    for i in range(ROUNDS + 5):
        for name in names if i % 2 == 0 else names[::-1]:
            cmd = [MEND, "apply", "--root", root, "--dry-run"]
            if "off" in name:
                cmd.append("--syntax=off")
            t = time.perf_counter()
            subprocess.run(cmd + [response], env=env, stdout=subprocess.DEVNULL, check=True)
            if i >= 5:
                runs[name].append(time.perf_counter() - t)
    return runs


def show(title, times):
    print(f"\n{title}")
    for name, ts in times.items():
        ts = sorted(ts)
        p90 = ts[int(len(ts) * 0.9)]
        print(f"  {name:<36} median {statistics.median(ts) * 1e3:6.2f} ms   p90 {p90 * 1e3:6.2f} ms   ({len(ts)} runs)")


def main():
    install_fs_server()
    work = tempfile.mkdtemp(prefix="mend-edit-peers-")
    try:
        env = dict(os.environ, MEND_STATE_DIR=os.path.join(work, "state"))
        os.makedirs(env["MEND_STATE_DIR"])
        lines = TEXT.count("\n")
        show(f"warm MCP edit_file on a {lines:,}-line Python file", asyncio.run(mcp_rounds(work, env)))
        cli = cli_rounds(work, env)
        show(f"one `mend apply --dry-run` process, one edit of the same file", cli)
        on, off = (statistics.median(v) for v in cli.values())
        print(f"  syntax check on / off: {on / off:.2f}x")
    finally:
        shutil.rmtree(work, ignore_errors=True)


main()
