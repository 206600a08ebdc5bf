#!/usr/bin/env bash
# Builds the wheel and the npm packages with the quick release profile (scripts/package.sh
# --quick), then installs each from its local file into a fresh prefix with NO Rust toolchain on
# PATH, as a user without one would, and runs the gateway from there:
#   pip   a new venv, `pip install WHEEL`: `pegboard`
#   pipx  `pipx install WHEEL` (pipx from PyPI, pinned; its home in a temp dir): `pegboard`
#   uvx   `uvx --from WHEEL pegboard-mcp` (uv from PyPI, pinned; cache and tool dirs temporary)
#   npx   a new npm prefix, `npm install LAUNCHER.tgz PLATFORM.tgz`, then `npx pegboard-mcp` there
# For each: `demo` names the board and makes its sample call; `serve` answers the official Python
# SDK's tools/list over stdio with the 7 tools of the demo servers (which it starts through the same
# channel); an unknown subcommand's exit code (2) comes back through the channel unchanged.
# Ends with `packages: N passed, N failed`; exits non-zero when anything failed.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"

scripts/package.sh --quick
scripts/setup-test-deps.sh # the official Python SDK, the client of the serve checks
sdk_python="$root/target/test-deps/venv/bin/python"

pipx_version="1.18.4"
uv_version="0.13.8"
tools="$root/target/package-tools/venv"
if [ "$("$tools/bin/uv" --version 2>/dev/null | cut -d' ' -f1-2)" != "uv $uv_version" ] \
  || [ "$("$tools/bin/pipx" --version 2>/dev/null)" != "$pipx_version" ]; then
  echo "test-packages: installing uv $uv_version and pipx $pipx_version into $tools" >&2
  "$tools/bin/pip" install --quiet --disable-pip-version-check "uv==$uv_version" "pipx==$pipx_version"
fi

packages="$(cargo metadata --no-deps --format-version 1 | python3 -c '
import json, sys
print(json.load(sys.stdin)["target_directory"])')/packages"
wheel="$(ls "$packages"/pegboard_mcp-*.whl)"
launcher_tgz="$(ls "$packages"/pegboard-mcp-[0-9]*.tgz)"
platform_tgz="$(ls "$packages"/pegboard-mcp-*-*-[0-9]*.tgz)"

work="$(mktemp -d "${TMPDIR:-/tmp}/pegboard-packages.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# PATH less every directory that holds cargo, rustc or rustup.
clean_path=""
IFS=: read -r -a dirs <<<"$PATH"
for dir in "${dirs[@]}"; do
  if [ -z "$dir" ] || [ -e "$dir/cargo" ] || [ -e "$dir/rustc" ] || [ -e "$dir/rustup" ]; then
    continue
  fi
  clean_path="${clean_path:+$clean_path:}$dir"
done
export PATH="$clean_path"
if command -v cargo >/dev/null || command -v rustc >/dev/null; then
  echo "test-packages: cargo or rustc is still on PATH ($PATH)" >&2
  exit 1
fi
unset CARGO CARGO_HOME RUSTUP_HOME RUSTUP_TOOLCHAIN CARGO_TARGET_DIR

# Every tool's state in the temp dir, no download where a flag can forbid one.
export UV_CACHE_DIR="$work/uv/cache" UV_TOOL_DIR="$work/uv/tools" UV_TOOL_BIN_DIR="$work/uv/bin"
export UV_PYTHON_INSTALL_DIR="$work/uv/python" UV_PYTHON_DOWNLOADS=never UV_NO_CONFIG=1 UV_OFFLINE=1
export PIPX_HOME="$work/pipx/home" PIPX_BIN_DIR="$work/pipx/bin" PIPX_MAN_DIR="$work/pipx/man"
export npm_config_cache="$work/npm-cache" npm_config_offline=true npm_config_update_notifier=false
export npm_config_audit=false npm_config_fund=false

echo "test-packages: installing from $packages with PATH=$PATH" >&2
python3 -m venv "$work/pip-venv"
"$work/pip-venv/bin/pip" install --quiet --disable-pip-version-check --no-index "$wheel"
"$tools/bin/pipx" install --quiet --pip-args=--no-index "$wheel" >&2
mkdir -p "$work/npm"
npm install --silent --prefix "$work/npm" "$launcher_tgz" "$platform_tgz" >&2

passed=0
failed=0
# check NAME COMMAND...: runs it, output to the log; counts the outcome.
check() {
  local name="$1"
  shift
  if "$@"; then
    passed=$((passed + 1))
    echo "test-packages: ok    $name" >&2
  else
    failed=$((failed + 1))
    echo "test-packages: FAIL  $name" >&2
  fi
}

# demo_names_board CHANNEL CWD COMMAND...: `COMMAND demo` lists the board and makes its call.
demo_names_board() {
  local channel="$1" cwd="$2"
  shift 2
  local out="$work/$channel-demo.out"
  if ! (cd "$cwd" && timeout 120 "$@" demo >"$out"); then
    echo "test-packages: $channel: \`$* demo\` failed" >&2
    return 1
  fi
  local want wants=('$ pegboard tools' 'units-convert' 'notes-search' 'docs-read' '10 km = 6.213712 mi'
    'That is the board')
  # Away from a checkout the next step it suggests is the user's own servers and clients.
  [ -f "$cwd/examples/demo.json" ] || wants+=('pegboard import --all' 'pegboard connect CLIENT')
  for want in "${wants[@]}"; do
    if ! grep -qF -- "$want" "$out"; then
      echo "test-packages: $channel: \`$* demo\` printed no '$want'; it printed:" >&2
      cat "$out" >&2
      return 1
    fi
  done
}

# serve_lists_tools CHANNEL CWD COMMAND...: `COMMAND serve --config X`, X starting the demo
# servers as `COMMAND demo-server NAME`, answers tools/list with their 7 tools.
serve_lists_tools() {
  local channel="$1" cwd="$2"
  shift 2
  local config="$work/$channel-demo.json"
  python3 - "$config" "$@" <<'EOF'
import json, sys
config, command = sys.argv[1], sys.argv[2:]
servers = {name: {"command": command[0], "args": command[1:] + ["demo-server", name]}
           for name in ("notes", "units", "docs")}
with open(config, "w") as f:
    json.dump({"mcpServers": servers}, f, indent=2)
EOF
  local out="$work/$channel-tools.out"
  if ! timeout 120 "$sdk_python" "$root/scripts/list_tools_stdio.py" --cwd "$cwd" --expect 7 \
    -- "$@" serve --config "$config" >"$out"; then
    echo "test-packages: $channel: \`$* serve --config $config\` gave no 7 tools; listed:" >&2
    cat "$out" >&2
    return 1
  fi
  if [ "$(sort "$out" | tr '\n' ' ')" != "docs-read docs-search notes-add_note notes-list_notes notes-search units-convert units-list_units " ]; then
    echo "test-packages: $channel: unexpected tools:" >&2
    cat "$out" >&2
    return 1
  fi
}

# exit_code_passes CHANNEL CWD COMMAND...: clap's exit code 2 for an unknown subcommand comes
# back through the channel's launchers unchanged.
exit_code_passes() {
  local channel="$1" cwd="$2"
  shift 2
  local code=0
  (cd "$cwd" && timeout 60 "$@" no-such-subcommand >/dev/null 2>&1) || code=$?
  if [ "$code" != 2 ]; then
    echo "test-packages: $channel: \`$* no-such-subcommand\` exited $code, pegboard exits 2" >&2
    return 1
  fi
}

# channel NAME CWD COMMAND...: the three checks through one install channel.
channel() {
  local name="$1"
  check "$name: demo" demo_names_board "$@"
  check "$name: serve, tools/list" serve_lists_tools "$@"
  check "$name: exit code" exit_code_passes "$@"
}

channel pip "$work" "$work/pip-venv/bin/pegboard"
channel pipx "$work" "$PIPX_BIN_DIR/pegboard"
channel uvx "$work" "$tools/bin/uvx" --from "$wheel" pegboard-mcp
channel npx "$work/npm" npx --no pegboard-mcp

echo "packages: $passed passed, $failed failed"
[ "$failed" = 0 ]
