# Checks of fan-in results files, sourced by scripts/mpitest.sh and scripts/slurmtest.sh
# (needs jq; fail, bin and dir set by the caller).

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

# killrank RANK VAR LAUNCHED: finds the process of $bin whose environment sets VAR=RANK (the
# launcher's rank variable) and kills it 3 s into the measured interval.
killrank() {
	victim=""
	for _ in $(seq 1 100); do
		sleep 0.1
		for e in /proc/[0-9]*/environ; do
			pid=${e#/proc/}; pid=${pid%/environ}
			if [ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$bin" ] && tr '\0' '\n' <"$e" 2>/dev/null | grep -qx "$2=$1"; then
				victim=$pid
			fi
		done
		[ -n "$victim" ] && break
	done
	[ -n "$victim" ] || { kill "$3" 2>/dev/null; fail "rank $1 never started"; }
	sleep 3 # into the measured interval
	kill -9 "$victim"
}

# checkkilled FILE LOG: the run with rank 2 killed failed, names the rank, and kept the other
# ranks' points.
checkkilled() {
	jq -e '.status.state == "failed" and (.status.message | test("rank 2 \\(host [^)]*\\)")) and
		(.points[0].complete | not) and ([.points[0].fanin.failed[].rank] | index(2)) != null and
		([.points[0].fanin.ranks[].rank] | index(2)) == null and
		(.points[0].fanin.ranks | length) >= 1 and all(.points[0].fanin.ranks[]; .point.rtt.count > 0) and
		.points[0].rtt.count == ([.points[0].fanin.ranks[].point.rtt.count] | add)' "$1" >/dev/null ||
		{ cat "$2" >&2; jq '.status, (.points[0].fanin | del(.ranks))' "$1" >&2 || true; fail "$1: want a failed run naming rank 2 that kept the other ranks' points"; }
	jq -r '"  failed: \(.status.message)\n  kept ranks \([.points[0].fanin.ranks[].rank]), \(.points[0].rtt.count) RPCs"' "$1"
}
