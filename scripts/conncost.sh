#!/bin/sh
# What connections cost a server, and whether idle or hostile-but-harmless connections hurt a
# good client (soft provider over TCP, two processes on this machine). About a minute.
#
#  (a) a good client's NULL rate at depth 1 alone, beside 4 idle connections, and while 200
#      connections are opened and held (the server's --max-connections raised to 256),
#      alternating, RUNS rounds; medians and ratios to "alone";
#  (b) 100 connections that made one NULL each, then idle: the server's RSS per connection
#      and its CPU use while they idle (test/conncost);
#  (c) --max-connections 2: the third connection is refused with the reason, which the
#      client prints.
#
# Environment: RUNS (default 3), POLL (the server's --poll, default its own default),
# BIN (default: build it), PORT (default 20149).
set -eu
cd "$(dirname "$0")/.."
RUNS=${RUNS:-3}
PORT=${PORT:-20149}
ADDR=127.0.0.1:$PORT
OUT=${OUT:-build/conncost}
mkdir -p "$OUT"
if [ -z "${BIN:-}" ]; then
	BIN=build/rpcrdma-bench
	CGO_ENABLED=0 go build -o "$BIN" ./cmd/rpcrdma-bench
fi
CC=build/conncost-tool
CGO_ENABLED=0 go build -o "$CC" ./test/conncost
POLLFLAG=
[ -n "${POLL:-}" ] && POLLFLAG="--poll $POLL"

SRV=
stop_server() { [ -n "$SRV" ] && kill "$SRV" 2>/dev/null && wait "$SRV" 2>/dev/null; SRV=; }
trap stop_server EXIT
start_server() {
	# shellcheck disable=SC2086
	"$BIN" server --listen "$ADDR" $POLLFLAG "$@" >"$OUT/server.log" 2>&1 &
	SRV=$!
	sleep 0.5
}

rate() { # a good client's NULL RPC/s at depth 1 for 2 s
	"$BIN" client --addr "$ADDR" --mix null --depth 1 --duration 2s --warmup 500ms -q \
		--out "$OUT/good.json" >/dev/null 2>&1
	python3 -c 'import json,sys; print(round(json.load(open(sys.argv[1]))["points"][0]["throughput"]["rpc_per_s"]))' "$OUT/good.json"
}

echo "(a) good client's NULL rate (RPC/s, depth 1) alone, beside 4 idle connections, during 200 held"
start_server --max-connections 256
alone="" idle4="" held200=""
for r in $(seq 1 "$RUNS"); do
	alone="$alone $(rate)"
	"$CC" -addr "$ADDR" -pid "$SRV" -conns 4 -hold 4s >/dev/null &
	cc=$!; sleep 1.2
	idle4="$idle4 $(rate)"
	wait $cc
	"$CC" -addr "$ADDR" -pid "$SRV" -conns 200 -hold 4s >/dev/null &
	cc=$!; sleep 0.3 # the 200 connections are still being opened when the client starts
	held200="$held200 $(rate)"
	wait $cc
done
python3 - "$alone" "$idle4" "$held200" <<'PY'
import statistics, sys
rows = [("alone", sys.argv[1]), ("beside 4 idle", sys.argv[2]), ("200 opened and held", sys.argv[3])]
base = statistics.median(float(x) for x in rows[0][1].split())
for name, v in rows:
    xs = [float(x) for x in v.split()]
    m = statistics.median(xs)
    print(f"  {name:22s} median {m:9.0f} RPC/s  ratio {m/base:5.2f}  runs {' '.join(str(int(x)) for x in xs)}")
PY
stop_server

echo "(b) 100 connections, one NULL each, then idle 10 s"
start_server
"$CC" -addr "$ADDR" -pid "$SRV" -conns 100 -hold 10s
stop_server

echo "(c) --max-connections 2: a third connection"
start_server --max-connections 2
"$CC" -addr "$ADDR" -pid "$SRV" -conns 3 -hold 1s
grep refused "$OUT/server.log" || true
stop_server
