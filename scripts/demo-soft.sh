#!/bin/sh
# The issue 7 demonstration on the soft provider, repeatable by anyone: about 3 minutes on
# 2 cores. Everything goes under build/demo/ (git-ignored).
#
#  (a) a sweep over inline thresholds 1k,4k,16k,64k × payload sizes 64 B..1 MiB, for ECHO
#      (payload both ways, never DDP: short → long) and SOURCE (payload in the reply, DDP:
#      short → chunked), drawn by 'plot' and rendered by 'report --format html';
#  (b) the pre-registered memory mode against the windows mode (a memory window bound and
#      invalidated per chunk of each RPC, as the Linux client's FRWR): RUNS runs of the
#      same points each, then 'compare', which must flag the slower side (exit 1).
#
# Soft numbers are noisy (a shared 2-core box): points are short and (b) repeats them.
# Environment: OUT (default build/demo), RUNS (default 10: with 5 runs per side the rank test
# missed the windows cost on a quiet machine, p = 0.06), BIN (default: build it).
set -eu
cd "$(dirname "$0")/.."
OUT=${OUT:-build/demo}
RUNS=${RUNS:-10}
if [ -z "${BIN:-}" ]; then
	BIN=build/rpcrdma-bench
	CGO_ENABLED=0 go build -o "$BIN" ./cmd/rpcrdma-bench
fi
rm -rf "$OUT"
mkdir -p "$OUT/sweep" "$OUT/preregistered" "$OUT/windows"

# (a) The sweep: 4 thresholds × 8 sizes per procedure, 300 ms per point after 100 ms warm-up.
for proc in echo source; do
	"$BIN" sweep --proc "$proc" --thresholds 1k,4k,16k,64k --sizes 64,256,1k,4k,16k,64k,256k,1m \
		--depth 1 --duration 300ms --warmup 100ms --interval 0 -q --out "$OUT/sweep/$proc.json"
done
"$BIN" report --format switches "$OUT/sweep"
"$BIN" plot --out "$OUT/sweep/plots" --format png "$OUT/sweep"
"$BIN" report --format html --png --title "rpcrdma-bench on soft: thresholds × sizes" "$OUT/sweep"

# (b) Pre-registered against windows: SINK and SOURCE of 4 KiB and 64 KiB at threshold 1k,
# so every RPC moves its payload through a chunk (Read chunk, Write chunk) and windows mode
# binds and invalidates one window per RPC. The modes alternate, so that background load
# hits both alike.
for i in $(seq 1 "$RUNS"); do
	for mode in preregistered windows; do
		for proc in sink source; do
			"$BIN" sweep --proc "$proc" --thresholds 1k --sizes 4k,64k --depth 16 --duration 500ms --warmup 100ms \
				--memory "$mode" --interval 0 -q --out "$OUT/$mode/$proc-$i.json" >/dev/null
		done
	done
done
# The memory work each mode did (first run's points): windows binds and invalidates a window
# per RPC, pre-registered none.
for mode in preregistered windows; do
	for proc in sink source; do
		printf '%-13s %-6s ' "$mode" "$proc"
		awk '/"(bind_mw|local_inv)": \{/ { name = $1 } /"count"/ && name != "" { printf "%s %s ", name, $2; name = "" }' \
			"$OUT/$mode/$proc-1.json"
		echo
	done
done
set +e
"$BIN" compare --metrics p50,p99,rps "$OUT/preregistered" -- "$OUT/windows"
code=$?
echo "compare preregistered -- windows: exit $code (1: windows flagged as a regression)"

# (c) A control on the same box: one credit against sixteen at depth 16, the same points
# (credits are a transport knob, not a point parameter): one RPC in flight instead of
# sixteen must show, and compare must flag it (exit 1).
mkdir -p "$OUT/credits16" "$OUT/credits1"
for i in $(seq 1 "$RUNS"); do
	for c in 16 1; do
		"$BIN" run --mix sink/4k --thresholds 1k --depth 16 --credits "$c" --duration 500ms --warmup 100ms \
			--interval 0 -q --out "$OUT/credits$c/run-$i.json" >/dev/null
	done
done
"$BIN" compare --metrics p50,rps "$OUT/credits16" -- "$OUT/credits1"
echo "compare credits16 -- credits1: exit $? (1: flagged)"
exit 0
