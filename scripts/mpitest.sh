#!/bin/sh
# The fan-in under mpirun on this host over the soft provider: 1 server rank and 3 client
# ranks, then 4 ranks in pairs, then 4 ranks of which one client rank is killed mid-run.
# Each run's results file is checked: the merged histogram's count is the sum of the ranks'
# and every rank's measured interval overlaps the others' by at least 95% (the killed run:
# it failed, names the rank, and kept the others' points). As root it installs Open MPI and
# jq (Debian). Usage: scripts/mpitest.sh [DURATION], 3s by default.
set -eu
GO=${GO:-go}
DUR=${1:-3s}
need() { command -v "$1" >/dev/null 2>&1; }
if ! need mpirun || ! need jq || ! pkg-config --exists mpi-c; then
	if [ "$(id -u)" = 0 ] && need apt-get; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q openmpi-bin libopenmpi-dev jq pkg-config >/dev/null
	else
		echo "mpitest: needs mpirun, jq and Open MPI's headers (apt-get install openmpi-bin libopenmpi-dev jq)" >&2
		exit 1
	fi
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
bin=$dir/rpcrdma-bench
CGO_ENABLED=1 $GO build -tags mpi -o "$bin" ./cmd/rpcrdma-bench
# Open MPI refuses root without --allow-run-as-root; 4 ranks on fewer CPUs need --oversubscribe.
mpirun="mpirun --allow-run-as-root --oversubscribe"
flags="--duration $DUR --warmup 500ms --poll event --quiet"
fail() { echo "mpitest: $*" >&2; exit 1; }

# check FILE CLIENTS: the merged count is the sum of the ranks', every rank measured,
# every pair of ranks' intervals overlaps by at least 95% of the longer one, and (one host,
# one clock) every rank's estimated clock offset is within its bound of 0.
check() {
	jq -e --argjson n "$2" '
		def t: (.[0:19] + "Z" | fromdateiso8601) + ((capture("\\.(?<f>[0-9]+)Z$").f // "0") | "0." + . | tonumber);
		.points[0] as $p | $p.fanin.ranks as $r |
		($r | length) == $n and
		$p.rtt.count == ([$r[].point.rtt.count] | add) and
		all($r[]; .point.rtt.count > 0) and
		all($r[]; (if .clock_offset_ns < 0 then -.clock_offset_ns else .clock_offset_ns end) <= .clock_error_ns) and
		all($r[] as $a | $r[] as $b | {a: $a.point, b: $b.point};
			((([.a.end, .b.end] | map(t) | min) - ([.a.start, .b.start] | map(t) | max))
			 / ([(.a.end | t) - (.a.start | t), (.b.end | t) - (.b.start | t)] | max)) >= 0.95)
	' "$1" >/dev/null || { jq '.status, (.points[0] | {count: .rtt.count, fanin: (.fanin | del(.ranks)), ranks: [.fanin.ranks[] | {rank, count: .point.rtt.count, start: .point.start, end: .point.end}]})' "$1" >&2; fail "$1: merged count or overlap check failed"; }
	jq -r '.points[0] | "  \(.fanin.ranks | length) client ranks, \(.rtt.count) RPCs = sum of the ranks, overlap \(.fanin.overlap * 1000 | floor / 10)%, skew \(.fanin.skew_ns / 1000 | floor) µs, barrier \(.fanin.barrier_ns / 1000 | floor) µs, Jain \(.fanin.jain_index * 1000 | floor / 1000)"' "$1"
}

echo "mpitest: 1 server rank + 3 client ranks"
timeout 120 $mpirun -np 4 "$bin" fanin $flags --out "$dir/fanin.json" >"$dir/fanin.log" 2>&1 || { cat "$dir/fanin.log" >&2; fail "mpirun -np 4 fanin failed"; }
check "$dir/fanin.json" 3
jq -e '.status.state == "complete" and (.points[0].fanin.server_ranks | map(.rank)) == [0]' "$dir/fanin.json" >/dev/null || fail "fanin.json: not complete with server rank 0"

echo "mpitest: 4 ranks in pairs"
timeout 120 $mpirun -np 4 "$bin" fanin --pairs $flags --out "$dir/pairs.json" >"$dir/pairs.log" 2>&1 || { cat "$dir/pairs.log" >&2; fail "mpirun -np 4 fanin --pairs failed"; }
check "$dir/pairs.json" 2
jq -e '.status.state == "complete" and ([.points[0].fanin.ranks[].rank] == [1, 3]) and (.points[0].fanin.ranks[0].server != .points[0].fanin.ranks[1].server)' "$dir/pairs.json" >/dev/null || fail "pairs.json: ranks 1 and 3 did not drive servers of their own"

echo "mpitest: client rank 2 killed mid-run"
timeout 120 $mpirun -np 4 "$bin" fanin --duration 30s --warmup 500ms --poll event --quiet --out "$dir/killed.json" >"$dir/killed.log" 2>&1 &
launched=$!
victim=""
for _ in $(seq 1 100); do
	sleep 0.1
	for e in /proc/[0-9]*/environ; do
		pid=${e#/proc/}; pid=${pid%/environ}
		if [ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$bin" ] && tr '\0' '\n' <"$e" 2>/dev/null | grep -qx OMPI_COMM_WORLD_RANK=2; then
			victim=$pid
		fi
	done
	[ -n "$victim" ] && break
done
[ -n "$victim" ] || { kill "$launched" 2>/dev/null; fail "rank 2 never started"; }
sleep 3 # into the measured interval
kill -9 "$victim"
if wait "$launched"; then fail "the run with a killed rank succeeded"; fi
jq -e '.status.state == "failed" and (.status.message | test("rank 2 \\(host [^)]*\\)")) and
	(.points[0].complete | not) and ([.points[0].fanin.failed[].rank] | index(2)) != null and
	([.points[0].fanin.ranks[].rank] | index(2)) == null and
	(.points[0].fanin.ranks | length) >= 1 and all(.points[0].fanin.ranks[]; .point.rtt.count > 0) and
	.points[0].rtt.count == ([.points[0].fanin.ranks[].point.rtt.count] | add)' "$dir/killed.json" >/dev/null ||
	{ cat "$dir/killed.log" >&2; jq '.status, (.points[0].fanin | del(.ranks))' "$dir/killed.json" >&2 || true; fail "killed.json: want a failed run naming rank 2 that kept the other ranks' points"; }
jq -r '"  failed: \(.status.message)\n  kept ranks \([.points[0].fanin.ranks[].rank]), \(.points[0].rtt.count) RPCs"' "$dir/killed.json"
echo "mpitest: ok"
