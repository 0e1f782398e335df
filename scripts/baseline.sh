#!/bin/sh
# The soft provider between two processes against Go's net/rpc over loopback TCP, on this
# machine, alternating: NULL at depth 1 (p50 RTT) and at depth 32 (RPC/s), ROUNDS rounds,
# each rpcrdma-bench run once per pair of poll modes (server, client). Prints every round
# and, per row, the median and its ratio to net/rpc's median. About 20 s per round and mode
# pair.
#
# Environment: ROUNDS (default 3), MODES (the "server/client" pairs, default
# "event/busy hybrid/busy busy/busy event/event"), DURATION (default 2s), BIN (default:
# build it).
set -eu
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
MODES=${MODES:-"event/busy event/event hybrid/busy busy/busy"}
DURATION=${DURATION:-2s}
OUT=${OUT:-build/baseline}
mkdir -p "$OUT"
if [ -z "${BIN:-}" ]; then
	BIN=build/rpcrdma-bench
	CGO_ENABLED=0 go build -o "$BIN" ./cmd/rpcrdma-bench
fi
NR=build/netrpc
CGO_ENABLED=0 go build -o "$NR" ./test/baseline/netrpc
RB=127.0.0.1:20149
NA=127.0.0.1:20150

PIDS=
cleanup() { for p in $PIDS; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
"$NR" -serve "$NA" & PIDS="$PIDS $!"
sleep 0.3

rows="$OUT/rows.txt"
: >"$rows"
for round in $(seq 1 "$ROUNDS"); do
	for d in 1 32; do
		"$NR" -addr "$NA" -depth "$d" -duration "$DURATION" |
			sed -n "s/^NETRPC depth=\([0-9]*\) calls=[0-9]* p50_us=\([0-9.]*\) rpc_per_s=\([0-9]*\)/net\/rpc $d \2 \3/p" | tee -a "$rows"
	done
	for m in $MODES; do
		sp=${m%/*} cp=${m#*/}
		"$BIN" server --listen "$RB" --poll "$sp" >"$OUT/server.log" 2>&1 & srv=$!
		sleep 0.3
		for d in 1 32; do
			"$BIN" client --addr "$RB" --mix null --depth "$d" --duration "$DURATION" --warmup 300ms \
				--poll "$cp" -q --out "$OUT/client.json" >/dev/null 2>&1
			python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["points"][0]; print("soft", sys.argv[2], sys.argv[3], round(p["rtt"]["p50_ns"]/1e3, 1), round(p["throughput"]["rpc_per_s"]))' \
				"$OUT/client.json" "$sp/$cp" "$d" | sed "s/^soft \([^ ]*\) /soft-\1 /" | tee -a "$rows"
		done
		kill "$srv"; wait "$srv" 2>/dev/null || true
	done
done
echo
python3 - "$rows" <<'PY'
import statistics, sys, collections
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    name, depth, p50, rps = line.split()
    rows[(name, int(depth))].append((float(p50), float(rps)))
base = {d: (statistics.median(p for p, _ in rows[("net/rpc", d)]), statistics.median(r for _, r in rows[("net/rpc", d)])) for d in (1, 32)}
print(f"{'transport (server/client poll)':34s} {'depth':>5s} {'p50 RTT us':>10s} {'x net/rpc':>9s} {'RPC/s':>8s} {'x net/rpc':>9s}  runs")
for (name, d), v in sorted(rows.items(), key=lambda kv: (kv[0][1], kv[0][0] != "net/rpc", kv[0][0])):
    p = statistics.median(x for x, _ in v); r = statistics.median(y for _, y in v)
    print(f"{name:34s} {d:5d} {p:10.1f} {p/base[d][0]:9.2f} {r:8.0f} {r/base[d][1]:9.2f}  {len(v)}")
print("medians over the rounds; p50 is the full round trip for both")
PY
