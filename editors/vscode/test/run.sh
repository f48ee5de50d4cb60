#!/usr/bin/env bash
# The VS Code extension's tests: type check, unit tests, the .vsix, then the
# scenarios in a real VS Code (code-server) through Chromium and the latency
# benchmark. What they need (Chromium, Node 24, code-server) is installed
# once into a cache by setup.sh; the npm packages come from the lock file.
# Screenshots and figures go to target/vscode/. Needs the release binary:
# `cargo build --release -p mend` first (or MEND_BIN=path).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
top="$(cd "$here/../.." && pwd)"
out="$top/target/vscode"
mend="${MEND_BIN:-$top/target/release/mend}"

eval "$("$here/test/setup.sh")"
cd "$here"
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    npm ci --no-audit --no-fund
fi
npm run --silent check
npm run --silent test:unit
mkdir -p "$out"
rm -f "$out"/mend-*.vsix
npx --no-install vsce package --out "$out/mend-ci.vsix" </dev/null >/dev/null
[ -x "$mend" ] || { echo "vscode tests: no mend binary at $mend (cargo build --release -p mend)" >&2; exit 2; }
node test/e2e/run.mjs --mend "$mend" --vsix "$out/mend-ci.vsix" --out "$out" --bench "${MEND_VSCODE_BENCH:-40}" "$@"
