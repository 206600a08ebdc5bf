#!/usr/bin/env bash
# Installs the third-party MCP servers and clients that the end-to-end tests drive, into
# target/test-deps (idempotent; nothing outside the checkout is touched):
#   - PyPI: mcp (the official Python SDK, as a client) and mcp-server-time (a real server)
#   - npm:  @modelcontextprotocol/server-everything (the reference server) and
#           @modelcontextprotocol/sdk (the official TypeScript SDK, as a client; the version
#           server-everything 2026.8.31 resolves to, declared so the client tests own the pin),
#           @modelcontextprotocol/inspector (the MCP Inspector, driven in its --cli mode; it declares
#           Node >= 22.19 but its CLI runs on the machines' Node 20, and needs no network when run)
set -euo pipefail
cd "$(dirname "$0")/.."
deps="target/test-deps"
mkdir -p "$deps"

if [ ! -x "$deps/venv/bin/mcp-server-time" ] || ! "$deps/venv/bin/python" -c "import mcp" 2>/dev/null; then
  echo "setup: installing mcp and mcp-server-time into $deps/venv" >&2
  python3 -m venv "$deps/venv"
  "$deps/venv/bin/pip" install --quiet --disable-pip-version-check "mcp==2.3.0" "mcp-server-time==2026.10.19"
fi

ts_sdk="1.32.2"
inspector="2.12.0"
# The version of the installed npm package $1 ("" when it is not there).
installed_version() {
  node -e 'try { console.log(require(process.argv[1]).version) } catch { }' \
    "$PWD/$deps/node/node_modules/$1/package.json" 2>/dev/null
}
if [ ! -e "$deps/node/node_modules/.bin/mcp-server-everything" ] \
  || [ "$(installed_version @modelcontextprotocol/sdk)" != "$ts_sdk" ] \
  || ! grep -q '"@modelcontextprotocol/sdk"' "$deps/node/package.json" 2>/dev/null \
  || [ ! -e "$deps/node/node_modules/.bin/mcp-inspector" ] \
  || [ "$(installed_version @modelcontextprotocol/inspector)" != "$inspector" ]; then
  echo "setup: installing @modelcontextprotocol/server-everything, @modelcontextprotocol/sdk and @modelcontextprotocol/inspector into $deps/node" >&2
  mkdir -p "$deps/node"
  # The real path: through the target/ symlink of a worktree npm would write relative paths into the lock.
  npm install --silent --no-audit --no-fund --save-exact --prefix "$(cd "$deps/node" && pwd -P)" \
    "@modelcontextprotocol/server-everything@2026.8.31" "@modelcontextprotocol/sdk@$ts_sdk" \
    "@modelcontextprotocol/inspector@$inspector" >&2
fi
echo "setup: test dependencies ready in $deps" >&2
