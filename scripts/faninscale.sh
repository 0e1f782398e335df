#!/usr/bin/env bash
# How a fan-in scales on this host: one server rank against 1, 2, 4 and 8 client ranks under
# mpirun over the soft provider, the client counts alternated round by round; prints per
# count the median RPC/s and its ratio to 1 client rank (each round's ratio to that round's
# 1-rank run, then the median), the start skew, the barrier and the intervals' overlap, as a
# Markdown table. Needs what scripts/mpitest.sh needs. Usage: scripts/faninscale.sh
# [ROUNDS [DURATION]], 3 rounds of 3s by default.
set -eu
GO=${GO:-go}
ROUNDS=${1:-3}
DUR=${2:-3s}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
bin=$dir/rpcrdma-bench
CGO_ENABLED=1 $GO build -tags mpi -o "$bin" ./cmd/rpcrdma-bench
mpirun="mpirun --allow-run-as-root --oversubscribe"
for r in $(seq 1 "$ROUNDS"); do
	for n in 1 2 4 8; do
		timeout 180 $mpirun -np $((n + 1)) "$bin" fanin --duration "$DUR" --warmup 500ms --quiet \
			--out "$dir/r$r-n$n.json" >"$dir/r$r-n$n.log" 2>&1 || { cat "$dir/r$r-n$n.log" >&2; exit 1; }
	done
done
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
echo "Commit $commit, $(nproc) CPUs, soft provider, default nfs-like mix at depth 16, $DUR per run, $ROUNDS rounds:"
echo
echo "| client ranks | RPC/s (median) | ratio to 1 rank (median of rounds) | start skew | barrier | overlap (lowest) | Jain (lowest) |"
echo "|---|---|---|---|---|---|---|"
for r in $(seq 1 "$ROUNDS"); do cat "$dir/r$r-n1.json"; done >"$dir/one.json"
for n in 1 2 4 8; do
	jq -s --argjson n "$n" --slurpfile one "$dir/one.json" '
		def med: sort | .[length / 2 | floor];
		[.[].points[0]] as $p | [$one[].points[0]] as $o |
		"| \($n) | \([$p[].throughput.rpc_per_s] | med | floor) | \([range($p | length) as $i | $p[$i].throughput.rpc_per_s / $o[$i].throughput.rpc_per_s] | med * 100 | floor / 100) | \([$p[].fanin.skew_ns] | med / 1000 | floor) µs | \([$p[].fanin.barrier_ns] | med / 1000 | floor) µs | \([$p[].fanin.overlap] | min * 1000 | floor / 10)% | \([$p[].fanin.jain_index] | min * 1000 | floor / 1000) |"
	' $(for r in $(seq 1 "$ROUNDS"); do echo "$dir/r$r-n$n.json"; done) | tr -d '"'
done
