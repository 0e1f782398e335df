#!/usr/bin/env bash
# noise-sources.sh measures how much the README's CI recipe's points move from one process
# to the next, under variants of where the process runs: the noise the gate's intervals must
# cover. Each variant runs PROCS processes of one round each (the recipe's three points),
# the variants alternated process by process; for each variant and point it prints the
# coefficient of variation (sd/mean, percent) of the p50 and of RPC/s across processes, and
# their medians.
#
# Variants (name: how it runs):
#   default   as the recipe runs: pollers unpinned, the kernel places the threads
#   pinned    --cpus 0 (the requester's poller on CPU 0)
#   onecpu    taskset -c 0 and --cpus 0: the whole process on CPU 0
#   gc-off    GOGC=off (no collection can start during a point)
#
# usage: scripts/noise-sources.sh   (environment: PROCS=10, VARIANTS="default pinned onecpu gc-off",
#        DURATION=250ms, WARMUP=100ms, BIN=built from this tree, WORK=$(mktemp -d))
set -euo pipefail
cd "$(dirname "$0")/.."
PROCS=${PROCS:-10}
VARIANTS=${VARIANTS:-default pinned onecpu gc-off}
DURATION=${DURATION:-250ms}
WARMUP=${WARMUP:-100ms}
WORK=${WORK:-$(mktemp -d)}
mkdir -p "$WORK"
if [[ -z ${BIN:-} ]]; then
	BIN=$WORK/rpcrdma-bench
	CGO_ENABLED=0 go build -o "$BIN" ./cmd/rpcrdma-bench
fi
recipe=(sweep --thresholds 4k --sizes 64,4k,64k --duration "$DURATION" --warmup "$WARMUP" -q)

run() { # run VARIANT OUT
	case $1 in
	default) "$BIN" "${recipe[@]}" --out "$2" ;;
	pinned) "$BIN" "${recipe[@]}" --cpus 0 --out "$2" ;;
	onecpu) taskset -c 0 "$BIN" "${recipe[@]}" --cpus 0 --out "$2" ;;
	gc-off) GOGC=off "$BIN" "${recipe[@]}" --out "$2" ;;
	*) echo "noise-sources: unknown variant $1" >&2; exit 2 ;;
	esac >/dev/null 2>&1 || true
}

for i in $(seq "$PROCS"); do
	for v in $VARIANTS; do
		run "$v" "$WORK/$v-$i.json"
	done
done
echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown), $PROCS processes per variant, alternated; recipe ${recipe[*]}"
printf '%-8s %-6s %12s %8s %12s %8s\n' variant size "p50 median" "p50 cv" "RPC/s med" "rps cv"
for v in $VARIANTS; do
	jq -s -r '[.[].points[]] | group_by(.params.call_bytes)[] |
		(map(.rtt.p50_ns) | sort) as $p | (map(.throughput.rpc_per_s) | sort) as $r |
		def mean: add / length; def cv: (mean) as $m | ((map((. - $m) * (. - $m)) | add / (length - 1)) | sqrt) / $m * 100;
		"\(.[0].params.call_bytes) \($p[length/2|floor]) \($p | cv) \($r[length/2|floor]) \($r | cv)"' "$WORK/$v"-*.json |
		while read -r size p50 p50cv rps rpscv; do
			printf '%-8s %-6s %10.0fns %7.1f%% %12.0f %7.1f%%\n' "$v" "$size" "$p50" "$p50cv" "$rps" "$rpscv"
		done
done
