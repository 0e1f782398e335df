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

# killrank RANK VAR LAUNCHED [SIGNAL]: finds the process of $bin whose environment sets
# VAR=RANK (the launcher's rank variable) and sends it SIGNAL (KILL by default) 3 s into the
# measured interval; $victim is its pid.
killrank() {
	victim=$(rankpid "$1" "$2")
	[ -n "$victim" ] || { kill "$3" 2>/dev/null; fail "rank $1 never started"; }
	sleep 3 # into the measured interval
	kill -"${4:-KILL}" "$victim"
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

# rankpid RANK VAR: the pid of $bin whose environment sets VAR=RANK, waiting up to 10 s;
# nothing if none.
rankpid() {
	for _ in $(seq 1 100); do
		for e in /proc/[0-9]*/environ; do
			pid=${e#/proc/}; pid=${pid%/environ}
			if [ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$bin" ] && tr '\0' '\n' <"$e" 2>/dev/null | grep -qx "$2=$1"; then
				echo "$pid"
				return
			fi
		done
		sleep 0.1
	done
}

# strays PORT: from another process (bash), the stray connections a job's rank 0 must refuse
# without touching the real ranks: hellos for client rank 1 and server rank 0 without the
# secret, one with a wrong secret, one naming a rank not in the job, a first message that is
# not a hello, a 256 MiB frame header, and a connection that says nothing.
strays() {
	bash -c '
		shopt -s execfail # a refused connection must not end the strays
		port=$1
		frame() { printf "\\x$(printf %02x $((${#1} >> 8)))\\x$(printf %02x $((${#1} & 255)))" | { printf "\0\0"; cat; }; printf %s "$1"; }
		send() { exec 3<>"/dev/tcp/127.0.0.1/$port" || return; { printf "$1" 2>/dev/null || true; } >&3; sleep 0.3; exec 3>&-; }
		for m in "{\"kind\":\"hello\",\"rank\":1,\"host\":\"stray\",\"role\":\"client\"}" \
			"{\"kind\":\"hello\",\"rank\":0,\"host\":\"stray\",\"role\":\"server\"}" \
			"{\"kind\":\"hello\",\"rank\":2,\"host\":\"stray\",\"role\":\"client\",\"secret\":\"0123456789abcdef\"}" \
			"{\"kind\":\"hello\",\"rank\":99,\"host\":\"stray\",\"role\":\"client\"}" \
			"{\"kind\":\"result\",\"rank\":1}"; do
			exec 3<>"/dev/tcp/127.0.0.1/$port" || continue
			frame "$m" >&3
			sleep 0.3
			exec 3>&-
		done
		send "\x0f\xff\xff\xff"
		send ""
	' strays "$1"
}

# coordport LOG: the port rank 0's coordinator listens on, from its log line (up to 10 s).
coordport() {
	for _ in $(seq 1 100); do
		p=$(sed -n 's/.*coordinator at [^ ]*:\([0-9]*\)$/\1/p' "$1" 2>/dev/null || true) # the log may not exist yet
		[ -n "$p" ] && { echo "$p"; return; }
		sleep 0.1
	done
}

# checkstrays FILE LOG CLIENTS: a job that refused the strays completed with every client
# rank's point, and recorded and logged the refusals.
checkstrays() {
	jq -e '.status.state == "complete" and .points[0].fanin.refused_count >= 7 and
		([.points[0].fanin.refused[].cause] | any(test("without the job.s secret")) and
		 any(test("not a hello")) and any(test("at most 4096")))' "$1" >/dev/null ||
		{ cat "$2" >&2; jq '.status, (.points[0].fanin | del(.ranks))' "$1" >&2 || true; fail "$1: want a complete run that refused the 7 strays"; }
	check "$1" "$3"
	grep -q "refused a connection from" "$2" || { cat "$2" >&2; fail "$2: the refusals are not in rank 0's output"; }
	jq -r '"  refused \(.points[0].fanin.refused_count) connections, e.g. \(.points[0].fanin.refused[0].cause)"' "$1"
}

# checkgaveup FILE LOG RANK SECS BOUND: the job with RANK stopped (SIGSTOP) ended within BOUND
# seconds (SECS it took), failed naming the rank as stopped or hung, and kept the other
# client ranks' points.
checkgaveup() {
	[ "$4" -le "$5" ] || fail "the job with rank $3 stopped took $4 s, past its bound of $5 s"
	jq -e --argjson r "$3" '.status.state == "failed" and (.status.message | test("rank \($r) \\(host [^)]*\\): sent nothing for .*stopped or hangs")) and
		([.points[0].fanin.failed[].rank] | index($r)) != null and ([.points[0].fanin.ranks[].rank] | index($r)) == null and
		(.points[0].fanin.ranks | length) >= 1 and all(.points[0].fanin.ranks[]; .point.rtt.count > 0) and
		.points[0].rtt.count == ([.points[0].fanin.ranks[].point.rtt.count] | add)' "$1" >/dev/null ||
		{ cat "$2" >&2; jq '.status, (.points[0].fanin | del(.ranks))' "$1" >&2 || true; fail "$1: want a failed run naming stopped rank $3 that kept the others' points"; }
	jq -r --arg s "$4" '"  ended in \($s) s: \(.status.message)\n  kept ranks \([.points[0].fanin.ranks[].rank])"' "$1"
}

# checkownfiles OUT LOG RANKS...: with rank 0 killed, each client rank wrote its own points to
# OUT.RANK, failed with rank 0's loss as the cause.
checkownfiles() {
	out=$1 log=$2
	shift 2
	for r in "$@"; do
		jq -e --argjson r "$r" '.status.state == "failed" and (.status.message | test("rank \($r).s own points only: rank 0 \\(host [^)]*\\): lost")) and
			[.points[0].fanin.ranks[].rank] == [$r] and .points[0].rtt.count > 0 and .points[0].fanin.failed[0].rank == 0' "$out.$r" >/dev/null ||
			{ cat "$log" >&2; jq '.status' "$out.$r" >&2 || true; fail "$out.$r: want rank $r's own points with rank 0's loss"; }
	done
	jq -r '"  \(.status.message)"' "$out.$1"
}

# faults NAME VAR LAUNCHER...: the fault steps, each a 4-rank job started by LAUNCHER (VAR: its
# rank variable): stray connections to rank 0 while the job runs; a client rank, then a server
# rank of --server-ranks 0,1, stopped with SIGSTOP mid-point (the job must end within the
# point's deadline: 500 ms warm-up + 30 s + 10 s drain + 10 s grace, and 2 s to start);
# rank 0 killed mid-point.
faults() {
	name=$1 var=$2
	shift 2
	echo "$name: stray connections to rank 0 during a 4-rank job"
	timeout 120 "$@" "$bin" fanin --duration 4s --warmup 500ms --poll event --quiet --out "$dir/stray.json" >"$dir/stray.log" 2>&1 &
	launched=$!
	port=$(coordport "$dir/stray.log")
	[ -n "$port" ] || { kill "$launched"; cat "$dir/stray.log" >&2; fail "no coordinator port in rank 0's log"; }
	sleep 1.5 # into the measured interval
	strays "$port" || true # the job's own outcome says whether it mattered
	wait "$launched" || { cat "$dir/stray.log" >&2; fail "the job with stray connections failed"; }
	checkstrays "$dir/stray.json" "$dir/stray.log" 3

	for step in "client 2" "server 1 --server-ranks 0,1"; do
		role=${step%% *} r=$(echo "$step" | cut -d' ' -f2) extra=$(echo "$step" | cut -d' ' -f3-)
		echo "$name: $role rank $r stopped (SIGSTOP) mid-point"
		t0=$(date +%s)
		timeout 120 "$@" "$bin" fanin $extra --duration 30s --warmup 500ms --poll event --quiet --out "$dir/stopped.json" >"$dir/stopped.log" 2>&1 &
		launched=$!
		killrank "$r" "$var" "$launched" STOP
		if wait "$launched"; then fail "the run with a stopped rank succeeded"; fi
		took=$(($(date +%s) - t0))
		kill -KILL "$victim" 2>/dev/null || true
		checkgaveup "$dir/stopped.json" "$dir/stopped.log" "$r" "$took" 53
	done

	echo "$name: rank 0 killed mid-point"
	timeout 120 "$@" "$bin" fanin --duration 30s --warmup 500ms --poll event --quiet --out "$dir/lost.json" >"$dir/lost.log" 2>&1 &
	launched=$!
	killrank 0 "$var" "$launched"
	if wait "$launched"; then fail "the run with rank 0 killed succeeded"; fi
	checkownfiles "$dir/lost.json" "$dir/lost.log" 1 2 3
}
