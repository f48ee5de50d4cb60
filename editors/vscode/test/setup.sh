#!/usr/bin/env bash
# Installs what the VS Code extension's tests need, once, into a cache folder
# reused between runs: Debian's Chromium and the build tools code-server's
# native modules compile with (apt), Node 24 (npm package `node@24`), and
# code-server. Prints `export` lines for the caller to eval:
#   eval "$(editors/vscode/test/setup.sh)"
set -euo pipefail

CODE_SERVER_VERSION=4.139.1
CACHE="${MEND_VSCODE_CACHE:-$HOME/.cache/mend-vscode}"
mkdir -p "$CACHE"
log() { echo "vscode setup: $*" >&2; }

# Debian packages: only the missing ones, with sudo when not root.
want=(chromium build-essential pkg-config libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev)
# npm fetches Node 24 itself; any npm will do for that.
command -v npm >/dev/null || want+=(npm)
missing=()
for p in "${want[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    log "apt-get install ${missing[*]}"
    $SUDO apt-get update -qq >&2 || true
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

# Node 24, from the registry package that carries the binary.
NODE_DIR="$CACHE/node24"
if [ ! -x "$NODE_DIR/node_modules/.bin/node" ]; then
    log "npm install node@24"
    npm install --prefix "$NODE_DIR" --no-audit --no-fund --silent node@24 >&2
fi
export PATH="$NODE_DIR/node_modules/.bin:$PATH"

# code-server, built against that Node (its install script compiles native modules).
CS_DIR="$CACHE/code-server-$CODE_SERVER_VERSION"
if [ ! -x "$CS_DIR/node_modules/.bin/code-server" ]; then
    log "npm install code-server@$CODE_SERVER_VERSION (about 4 minutes)"
    rm -rf "$CS_DIR.partial"
    mkdir -p "$CS_DIR.partial"
    npm install --prefix "$CS_DIR.partial" --no-audit --no-fund --foreground-scripts \
        "code-server@$CODE_SERVER_VERSION" >&2
    rm -rf "$CS_DIR"
    mv "$CS_DIR.partial" "$CS_DIR"
fi

echo "export PATH=\"$NODE_DIR/node_modules/.bin:\$PATH\""
echo "export MEND_CODE_SERVER=\"$CS_DIR/node_modules/.bin/code-server\""
echo "export MEND_CHROMIUM=\"$(command -v chromium)\""
