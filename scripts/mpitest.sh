#!/bin/sh
# The fan-in under mpirun on this host over the soft provider: 1 server rank and 3 client
# ranks, then 4 ranks in pairs, a sweep's points in lockstep, then 4 ranks of which one client
# rank is killed mid-run, then the fault steps (scripts/fanincheck.sh's faults: strays, a
# stopped client rank, a stopped server rank, rank 0 killed).
# Each run's results file is checked: the merged histogram's count is the sum of the ranks'
# and every rank's measured interval overlaps the others' by at least 95% (80% for the sweep's 500 ms points; the killed run:
# it failed, names the rank, and kept the others' points). As root it installs Open MPI and
# jq (Debian). Usage: scripts/mpitest.sh [DURATION], 3s by default.
set -eu
GO=${GO:-go}
DUR=${1:-3s}
need() { command -v "$1" >/dev/null 2>&1; }
if ! need mpirun || ! need jq || ! pkg-config --exists mpi-c; then
	if [ "$(id -u)" = 0 ] && need apt-get; then
		apt-get update -qq
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

. "$(dirname "$0")/fanincheck.sh"

echo "mpitest: 1 server rank + 3 client ranks"
timeout 120 $mpirun -np 4 "$bin" fanin $flags --out "$dir/fanin.json" >"$dir/fanin.log" 2>&1 || { cat "$dir/fanin.log" >&2; fail "mpirun -np 4 fanin failed"; }
check "$dir/fanin.json" 3
jq -e '.status.state == "complete" and (.points[0].fanin.server_ranks | map(.rank)) == [0]' "$dir/fanin.json" >/dev/null || fail "fanin.json: not complete with server rank 0"

echo "mpitest: 4 ranks in pairs"
timeout 120 $mpirun -np 4 "$bin" fanin --pairs $flags --out "$dir/pairs.json" >"$dir/pairs.log" 2>&1 || { cat "$dir/pairs.log" >&2; fail "mpirun -np 4 fanin --pairs failed"; }
check "$dir/pairs.json" 2
jq -e '.status.state == "complete" and ([.points[0].fanin.ranks[].rank] == [1, 3]) and (.points[0].fanin.ranks[0].server != .points[0].fanin.ranks[1].server)' "$dir/pairs.json" >/dev/null || fail "pairs.json: ranks 1 and 3 did not drive servers of their own"

echo "mpitest: a sweep in lockstep, 2 thresholds x 2 sizes, 2 client ranks"
timeout 120 $mpirun -np 3 "$bin" fanin --sweep --thresholds 1k,4k --sizes 64,4k --duration 500ms --warmup 200ms --quiet \
	--out "$dir/sweep.json" >"$dir/sweep.log" 2>&1 || { cat "$dir/sweep.log" >&2; fail "mpirun -np 3 fanin --sweep failed"; }
jq -e '.status.state == "complete" and (.points | length) == 4 and all(.points[]; (.fanin.ranks | length) == 2 and
	.rtt.count == ([.fanin.ranks[].point.rtt.count] | add) and .fanin.overlap >= 0.8)' "$dir/sweep.json" >/dev/null ||
	{ jq -c '.status, [.points[] | {overlap: .fanin.overlap, skew_ns: .fanin.skew_ns, skew_error_ns: .fanin.skew_error_ns, ranks: [.fanin.ranks[] | {rank, clock_error_ns, count: .point.rtt.count}]}]' "$dir/sweep.json" >&2
	  fail "sweep.json: want 4 complete points, each merging 2 ranks that overlap by 80% (500 ms points on a shared host: a rank that ends 50 ms late is lockstep still)"; }
jq -r '"  \(.points | length) points, overlap at least \([.points[].fanin.overlap] | min * 1000 | floor / 10)%"' "$dir/sweep.json"

echo "mpitest: client rank 2 killed mid-run"
timeout 120 $mpirun -np 4 "$bin" fanin --duration 30s --warmup 500ms --poll event --quiet --out "$dir/killed.json" >"$dir/killed.log" 2>&1 &
launched=$!
killrank 2 OMPI_COMM_WORLD_RANK "$launched"
if wait "$launched"; then fail "the run with a killed rank succeeded"; fi
checkkilled "$dir/killed.json" "$dir/killed.log"

faults mpitest OMPI_COMM_WORLD_RANK $mpirun -np 4
echo "mpitest: ok"
