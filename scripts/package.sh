#!/usr/bin/env bash
# Builds the installable packages of the `pegboard` binary for this machine into target/packages/:
#   pegboard_mcp-VERSION-py3-none-PLATFORM.whl  PyPI `pegboard-mcp` (maturin, bin bindings):
#                                               `pegboard` and its `pegboard-mcp` launcher
#   pegboard-mcp-VERSION.tgz                    npm `pegboard-mcp`: the launcher (packaging/npm)
#   pegboard-mcp-OS-CPU-VERSION.tgz             npm `@pegboard-mcp/OS-CPU`: the binary
# VERSION is the workspace's (Cargo.toml), read through cargo metadata.
#
# Usage: scripts/package.sh [--quick]
#   the `dist` cargo profile by default (one LTO unit: what is published); `--quick` or
#   PROFILE=release for the default release profile (what CI installs and tests).
# Needs cargo, Python 3 (maturin, pinned, is installed from PyPI into target/package-tools/venv),
# Node with npm.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; }

profile="${PROFILE:-dist}"
for arg in "$@"; do
  case "$arg" in
    --quick) profile=release ;;
    -h | --help) usage; exit 0 ;;
    *) echo "package: unknown argument '$arg'" >&2; usage >&2; exit 2 ;;
  esac
done

maturin_version="1.16.0"
tools="$PWD/target/package-tools/venv"
if [ "$("$tools/bin/maturin" --version 2>/dev/null)" != "maturin $maturin_version" ]; then
  echo "package: installing maturin $maturin_version into $tools" >&2
  python3 -m venv "$tools"
  "$tools/bin/pip" install --quiet --disable-pip-version-check "maturin==$maturin_version"
fi

version="$(cargo metadata --no-deps --format-version 1 | python3 -c '
import json, sys
print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "pegboard-cli"))')"
target_dir="$(cargo metadata --no-deps --format-version 1 | python3 -c '
import json, sys
print(json.load(sys.stdin)["target_directory"])')"
out="$target_dir/packages"
rm -rf "$out"
mkdir -p "$out"
echo "package: pegboard-mcp $version, cargo profile $profile, into $out" >&2

# The wheel. maturin runs cargo for both binaries of pegboard-cli; its own target directory is
# the workspace's, so the binary below is the one it packed.
(cd packaging/pypi && "$tools/bin/maturin" build --profile "$profile" --out "$out")
binary="$target_dir/$profile/pegboard"
[ -x "$binary" ] || { echo "package: maturin built no $binary" >&2; exit 1; }

# The npm packages: the launcher and this platform's binary package, then a tarball of each.
staged="$out/npm"
mkdir -p "$staged"
node packaging/npm/stage.mjs "$version" "$binary" "$staged" | while read -r dir; do
  npm pack --silent --pack-destination "$out" "$dir" >/dev/null
done
rm -rf "$staged"
ls -l "$out" >&2
