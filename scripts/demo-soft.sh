#!/bin/sh
# An example on the soft provider, about a minute on 2 cores: which message class each size
# takes at each inline threshold, as charts (print-sized PNGs and SVGs, a throughput timeline per
# procedure) and an HTML report, under build/demo/ (git-ignored).
# Environment: OUT (default build/demo), BIN (default: build it), DURATION per point (300ms).
set -eu
cd "$(dirname "$0")/.."
OUT=${OUT:-build/demo}
DURATION=${DURATION:-300ms}
if [ -z "${BIN:-}" ]; then
	BIN=build/rpcrdma-bench
	CGO_ENABLED=0 go build -o "$BIN" ./cmd/rpcrdma-bench
fi
rm -rf "$OUT"
mkdir -p "$OUT/sweep"
# ECHO carries its payload both ways and never uses DDP (short, then long); SOURCE returns it
# in a Write chunk (short, then chunked).
for proc in echo source; do
	"$BIN" sweep --proc "$proc" --thresholds 1k,4k,16k --sizes 64,1k,4k,16k,64k \
		--depth 1 --duration "$DURATION" --warmup 100ms --interval 100ms -q --out "$OUT/sweep/$proc.json"
done
"$BIN" report --format switches "$OUT/sweep"
"$BIN" plot --out "$OUT/sweep/plots" "$OUT/sweep"
"$BIN" report --format html --title "rpcrdma-bench on soft: thresholds × sizes" "$OUT/sweep"
echo "demo: $OUT/sweep (results, plots/, the HTML report)"
