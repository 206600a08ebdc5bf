#!/usr/bin/env bash
# The project's test command: installs what the end-to-end tests need, then runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-test-deps.sh
cargo test --workspace --all-features --no-fail-fast "$@"
