#!/usr/bin/env bash
# Installs the third-party MCP servers and clients that the end-to-end tests drive, into
# target/test-deps (idempotent; nothing outside the checkout is touched):
#   - PyPI: mcp (the official Python SDK, as a client) and mcp-server-time (a real server)
#   - npm:  @modelcontextprotocol/server-everything (the reference server) and
#           @modelcontextprotocol/sdk (the official TypeScript SDK, as a client; the version
#           server-everything 2026.8.31 resolves to, declared so the client tests own the pin)
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
installed_sdk() {
  node -e 'try { console.log(require(process.argv[1]).version) } catch { }' \
    "$PWD/$deps/node/node_modules/@modelcontextprotocol/sdk/package.json" 2>/dev/null
}
if [ ! -e "$deps/node/node_modules/.bin/mcp-server-everything" ] || [ "$(installed_sdk)" != "$ts_sdk" ] \
  || ! grep -q '"@modelcontextprotocol/sdk"' "$deps/node/package.json" 2>/dev/null; then
  echo "setup: installing @modelcontextprotocol/server-everything and @modelcontextprotocol/sdk into $deps/node" >&2
  mkdir -p "$deps/node"
  # The real path: through the target/ symlink of a worktree npm would write relative paths into the lock.
  npm install --silent --no-audit --no-fund --save-exact --prefix "$(cd "$deps/node" && pwd -P)" \
    "@modelcontextprotocol/server-everything@2026.8.31" "@modelcontextprotocol/sdk@$ts_sdk" >&2
fi
echo "setup: test dependencies ready in $deps" >&2
