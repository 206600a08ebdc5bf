#!/usr/bin/env bash
# The project's test command: installs what the end-to-end tests need, then runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-test-deps.sh
# The Kubernetes manifests (deploy/k8s), offline: rendered, schema-checked, drain against grace period.
scripts/check-k8s.sh
cargo test --workspace --all-features --no-fail-fast "$@"
