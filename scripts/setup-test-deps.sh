#!/usr/bin/env bash
# Installs the third-party MCP servers and clients that the end-to-end tests drive, into
# target/test-deps (idempotent; nothing outside the checkout is touched):
#   - PyPI: mcp (the official Python SDK, as a client) and mcp-server-time (a real server)
#   - npm:  @modelcontextprotocol/server-everything (the reference server)
set -euo pipefail
cd "$(dirname "$0")/.."
deps="target/test-deps"
mkdir -p "$deps"

if [ ! -x "$deps/venv/bin/mcp-server-time" ] || ! "$deps/venv/bin/python" -c "import mcp" 2>/dev/null; then
  echo "setup: installing mcp and mcp-server-time into $deps/venv" >&2
  python3 -m venv "$deps/venv"
  "$deps/venv/bin/pip" install --quiet --disable-pip-version-check "mcp==2.3.0" "mcp-server-time==2026.10.19"
fi

if [ ! -e "$deps/node/node_modules/.bin/mcp-server-everything" ]; then
  echo "setup: installing @modelcontextprotocol/server-everything into $deps/node" >&2
  mkdir -p "$deps/node"
  npm install --silent --no-audit --no-fund --prefix "$deps/node" "@modelcontextprotocol/server-everything@2026.8.31" >&2
fi
echo "setup: test dependencies ready in $deps" >&2
