#!/usr/bin/env bash
# Runs each native fuzz target of the module for $FUZZTIME (default 10s), one at a time
# (go test -fuzz takes one target per run).
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZTIME=${FUZZTIME:-10s}
for pkg in $(go list ./...); do
	for target in $(CGO_ENABLED=0 go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
		echo "== $pkg $target ($FUZZTIME)"
		CGO_ENABLED=0 go test -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" "$pkg"
	done
done
