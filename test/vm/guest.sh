#!/bin/sh
# The suite run inside the guest. Every step prints "VMTEST: PASS <name>" or
# "VMTEST: FAIL <name> ..." (the host's summary greps them); the exit code is the number of
# failures. Measurements are printed as "VMTEST: LAT ...", "PINGPONG ...", "MATRIX ..." and
# "KNFSD ..." lines. VMTEST_STEPS (a comma-separated subset of verbs,bench,matrix,knfsd,cli,
# latency; default all) selects steps, for quick iterations. Files for the host (results,
# charts) go to /out, the host's $VMDIR/out shared over 9p, when it is mounted.
IP=10.0.2.15
DEV=rxe0
T=/opt/vmtest
FAILS=0
ts() { echo "[T+$(cut -d' ' -f1 /proc/uptime)s] $*"; }
result() { # name rc
	if [ "$2" -eq 0 ]; then echo "VMTEST: PASS $1"; else echo "VMTEST: FAIL $1 (rc=$2)"; FAILS=$((FAILS + 1)); fi
}

step() { # name: is the step selected?
	case ",${VMTEST_STEPS:-verbs,bench,matrix,knfsd,cli,latency}," in *",$1,"*) return 0 ;; esac
	return 1
}

ts "device"
rdma link show
ibv_devinfo -v -d $DEV | grep -E 'hca_id|fw_ver|max_qp_wr|max_sge:|max_cqe:|max_mw|max_qp_rd_atom|state|active_mtu|link_layer|GID\['

if [ -n "$VMTEST_RUN" ]; then
	VMTEST_REQUIRE_DEVICE=1 timeout 300 $T/verbs.test -test.v -test.count=1 -test.run "$VMTEST_RUN"
	result "verbs-tests -run $VMTEST_RUN" $?
	exit $FAILS
fi

# (a) the verbs provider's own tests and the datapath conformance suite (in one process and
# across two) on rxe0. Tests that need a device fail rather than skip here.
export VMTEST_REQUIRE_DEVICE=1
# Conformance cases where rdma_rxe (kernel 6.1) itself departs from RC hardware; they run
# separately and are expected to fail (XFAIL), so a fix in rxe shows up as XPASS:
#   SendTooLarge     the receive completes with IBV_WC_LOC_QP_OP_ERR, not LOC_LEN_ERR
#                    (rxe_resp.c, RESPST_ERR_LENGTH)
#   LocalProtection  a SEND naming a deregistered lkey completes with LOC_QP_OP_ERR, not
#                    LOC_PROT_ERR
#   MWRange          an access through a memory window is checked against the MR's range,
#                    not the window's (rxe_resp.c check_rkey)
RXE_XFAIL='TestConformance[A-Za-z]*/(SendTooLarge|LocalProtection|MWRange)$'
if step verbs; then
ts "=== verbs provider tests and conformance suite on $DEV"
timeout 400 $T/verbs.test -test.v -test.count=1 -test.timeout 380s -test.skip "$RXE_XFAIL"
result verbs-tests $?
ts "=== conformance cases rxe is known to fail"
timeout 120 $T/verbs.test -test.v -test.count=1 -test.run "$RXE_XFAIL" >/tmp/xfail.out 2>&1
xrc=$?
sed "s/^/xfail: /" /tmp/xfail.out # prefixed: these failures are expected
for c in SendTooLarge LocalProtection MWRange; do
	if grep -q -- "--- FAIL: TestConformance/$c " /tmp/xfail.out; then
		echo "VMTEST: XFAIL conformance/$c (rxe deviation)"
	elif grep -q -- "--- PASS: TestConformance/$c " /tmp/xfail.out; then
		echo "VMTEST: XPASS conformance/$c (rxe no longer deviates: drop it from RXE_XFAIL)"
	else
		result "conformance/$c (did not run, rc=$xrc)" 1
	fi
done
fi

if step bench; then
ts "=== BenchmarkPostPoll with and without the #cgo noescape/nocallback annotations"
for b in verbs verbs-noannot; do
	echo "VMTEST: BENCH $b.test"
	timeout 120 $T/$b.test -test.run '^$' -test.bench PostPoll -test.benchtime 3000x -test.count 3
	result "bench-$b" $?
done
ts "=== BenchmarkNullRPC: a depth-1 NULL RPC through the engine, with its C crossings per RPC"
timeout 120 $T/transport.test -test.run '^$' -test.bench NullRPC -test.benchtime 3000x -test.count 3
result bench-null-rpc $?
# Where a NULL round trip's time goes: Go's CPU profile of the same benchmark, longer, for the
# host to summarize (samples in C and the kernel show as runtime._ExternalCode).
if grep -q ' /out 9p ' /proc/mounts; then
	ts "=== BenchmarkNullRPC CPU profile"
	timeout 120 $T/transport.test -test.run '^$' -test.bench NullRPC -test.benchtime 20000x \
		-test.cpuprofile /out/nullrpc.prof >/dev/null
	result bench-null-rpc-profile $?
fi
fi

# Where the time goes, to the instruction's owner (not a default step: VMTEST_STEPS=profile,
# with perf on the host): perf samples the whole guest (-a, both CPUs, the kernel's rxe work
# included) while BenchmarkNullRPC runs, then while ib_send_lat's two processes run, and
# prints each one's share per program, library and kernel, then per function.
perf_share() { # data file, command name
	perf report -i "$1" --stdio -n --no-children --sort comm,dso --percent-limit 0.5 2>/dev/null | grep -v '^$' | grep -v '^# *$' | head -24
	perf report -i "$1" --stdio -n --no-children --comms "$2" --sort dso,sym --percent-limit 0.25 2>/dev/null | grep -v '^#' | grep -v '^$' | head -60
}
# rxe's packet counters, as name=value on one line.
hwc() { for f in /sys/class/infiniband/$DEV/ports/1/hw_counters/*; do printf '%s=%s ' "${f##*/}" "$(cat "$f")"; done; echo; }
# hwc_delta BEFORE AFTER N: the counters that moved, per N (round trips).
hwc_delta() {
	echo "$1" | tr ' ' '\n' >/tmp/hwa
	echo "$2" | tr ' ' '\n' >/tmp/hwb
	paste -d= /tmp/hwa /tmp/hwb | awk -F= -v n="$3" '$1 != "" && $4 != $2 { printf "    %-28s %10d  %.2f per round trip\n", $1, $4 - $2, ($4 - $2) / n }'
}
if step profile && command -v perf >/dev/null; then
	ts "=== profile: rxe packet counters per round trip, BenchmarkNullRPC (20000 RPCs)"
	a=$(hwc)
	$T/transport.test -test.run '^$' -test.bench NullRPC -test.benchtime 20000x >/dev/null
	hwc_delta "$a" "$(hwc)" 20000
	ts "=== profile: rxe packet counters per round trip, ib_send_lat -s 64 (20000 round trips)"
	ib_send_lat -d $DEV -R -s 64 -n 20000 >/dev/null 2>&1 &
	sleep 2
	a=$(hwc)
	ib_send_lat -d $DEV -R -s 64 -n 20000 $IP >/dev/null 2>&1
	wait
	hwc_delta "$a" "$(hwc)" 20000
	ts "=== profile: BenchmarkNullRPC (both ends in one goroutine), 20000 RPCs"
	perf record -q -a -e cpu-clock -F 10000 -o /tmp/null.data -- \
		$T/transport.test -test.run '^$' -test.bench NullRPC -test.benchtime 20000x
	result profile-null-rpc $?
	perf_share /tmp/null.data transport.test
	ts "=== profile: BenchmarkNullRPC's system calls, 20000 RPCs"
	perf trace -s -- $T/transport.test -test.run '^$' -test.bench NullRPC -test.benchtime 20000x 2>&1 | tail -40
	if [ -x $T/rpcrdma-bench ]; then
		ts "=== profile: rpcrdma-bench server and client (two processes), NULL at depth 1 for 3 s, busy"
		perf record -q -a -e cpu-clock -F 10000 -o /tmp/rb.data -- sh -c \
			"$T/rpcrdma-bench server --provider verbs --device $DEV --listen $IP:20079 --poll busy --once >/dev/null 2>&1 & sleep 1; $T/rpcrdma-bench client --provider verbs --device $DEV --addr $IP:20079 --mix null --depth 1 --duration 3s --warmup 0s --poll busy -q --out /tmp/rbp.json >/dev/null 2>&1; wait"
		result profile-rpcrdma-bench $?
		$T/rpcrdma-bench report --format csv /tmp/rbp.json 2>/dev/null | head -2
		perf_share /tmp/rb.data rpcrdma-bench
	fi
	ts "=== profile: ib_send_lat -R -s 64 -n 20000, server and client"
	perf record -q -a -e cpu-clock -F 10000 -o /tmp/perftest.data -- sh -c \
		"ib_send_lat -d $DEV -R -s 64 -n 20000 >/tmp/ps.out 2>&1 & sleep 2; ib_send_lat -d $DEV -R -s 64 -n 20000 $IP; wait"
	result profile-perftest $?
	perf_share /tmp/perftest.data ib_send_lat
	ts "=== profile: ib_send_lat's system calls (server), 20000 round trips"
	perf trace -s -o /tmp/pt.trace -- ib_send_lat -d $DEV -R -s 64 -n 20000 >/dev/null 2>&1 &
	sleep 3
	ib_send_lat -d $DEV -R -s 64 -n 20000 $IP >/dev/null 2>&1
	wait
	tail -30 /tmp/pt.trace
fi

# (b) the RPC-over-RDMA engine between the project's requester and responder: every message
# class both ways at 1, 4 and 64 KiB, both memory modes, verification and remote
# invalidation on. Prints the table as MATRIX lines.
if step matrix; then
ts "=== transport class matrix on $DEV"
timeout 300 $T/transport.test -test.v -test.count=1 -test.timeout 280s
result transport-class-matrix $?
fi

# (c) knfsd over RDMA: the kernel's NFS server with an RDMA listener on port 20049 (for the
# knfsd and cli steps).
if step knfsd || step cli; then
ts "=== starting knfsd with an RDMA listener"
modprobe nfsd && modprobe rpcrdma
mount -t nfsd nfsd /proc/fs/nfsd
mkdir -p /export /var/lib/nfs/v4recovery
mount -t tmpfs -o size=16m tmpfs /export
# The files --program nfs3 names: 4 MiB of the benchmark pattern to READ (and verify), a
# scratch file to WRITE (at most 4 MiB plus one write).
$T/nfsfile -size 4m /export/rpcrdma-bench.dat /export/rpcrdma-bench.scratch
rpcbind -w
sleep 0.3
exportfs -ra
rpc.mountd --no-udp -p 20048
# READ and WRITE of up to 1 MiB: knfsd otherwise sizes its largest block from the machine's
# memory (128 KiB on this guest), and longer reads come back short.
echo 1048576 >/proc/fs/nfsd/max_block_size
rpc.nfsd -G 10 -L 10 4
echo "rdma 20049" >/proc/fs/nfsd/portlist
echo "nfsd ports: $(cat /proc/fs/nfsd/portlist | tr '\n' ' ') threads: $(cat /proc/fs/nfsd/threads)"
fi
if step knfsd; then
ts "=== knfsd interop test"
KNFSD_ADDR=$IP:20049 timeout 120 $T/knfsd.test -test.v -test.count=1 -test.run 'NullCall$'
result knfsd-interop $?
ts "=== knfsd's NFSv3 replies recorded for the codec's tests (to the host's out/knfsd-replies)"
KNFSD_ADDR=$IP:20049 KNFSD_RECORD_DIR=/tmp/knfsd-replies timeout 120 $T/knfsd.test -test.v -test.count=1 -test.run 'RecordReplies$'
result knfsd-record-replies $?
grep -q ' /out 9p ' /proc/mounts && cp -r /tmp/knfsd-replies /out/
ts "=== the project's requester against knfsd: NFS NULL calls at depth 1 and 32"
KNFSD_ADDR=$IP:20049 timeout 300 $T/knfsd.test -test.v -test.count=1 -test.run 'NullStream$' -test.timeout 280s
result knfsd-null-stream $?
fi

# (d) the tool itself (cmd/rpcrdma-bench, built with -tags verbs), when it was built: server
# and client as two processes on rxe0, a client against knfsd, and a short sweep drawn as
# charts; every results file is checked by re-rendering it, and copied to /out.
if step cli && [ -x $T/rpcrdma-bench ]; then
	. $T/cli.sh
fi

# (e) latency side by side: perftest's ib_send_lat and our ping-pong, same device, same boot.
# ib_send_lat reports half round trips (t_typical = median of RTT/2).
perftest_lat() { # size; prints t_typical in microseconds; one retry (its TSC calibration
	# sometimes gives up under TCG: "Correlation coefficient r^2 < 0.9")
	for attempt in 1 2 3; do
		timeout 60 ib_send_lat -d $DEV -R -s $1 -n 1000 >/tmp/srv.out 2>&1 &
		spid=$!
		i=0 # until the server listens (the machine may be slow)
		while ! grep -q "Waiting for client" /tmp/srv.out 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
		timeout 60 ib_send_lat -d $DEV -R -s $1 -n 1000 $IP >/tmp/cli.out 2>&1
		crc=$?
		# A failed client (its connection rejected when it raced the server's listener) leaves
		# the server waiting until its timeout: end it now rather than a minute later.
		[ $crc -ne 0 ] && sleep 1 && kill $spid 2>/dev/null
		wait $spid
		src=$?
		cat /tmp/cli.out >&2
		t=$(awk -v s=$1 '$1 == s && NF >= 5 { print $5 }' /tmp/cli.out)
		m=$(awk -v s=$1 '$1 == s && NF >= 5 { print $3 }' /tmp/cli.out)
		# A failed clock calibration shows as "inf" or nothing.
		case "$crc$src:$t:$m" in
		00:[0-9]*:[0-9]*) case "$t$m" in *[!0-9.]*) ;; *) echo "t_typical_us=$t t_min_us=$m"; return 0 ;; esac ;;
		esac
		echo "ib_send_lat -s $1 attempt $attempt failed (client rc=$crc server rc=$src t_typical=$t)" >&2
		cat /tmp/srv.out >&2
		sleep 1
	done
	return 1
}
# rb_lat MODE [MIX]: the tool's round trip at depth 1 (MIX, default null), server and client
# as two processes, both polling in MODE; prints p50_us and min_us (full round trips) from its
# results file.
rb_lat() {
	[ -x $T/rpcrdma-bench ] || return 1
	port=$((20060 + $(printf '%s' "$1" | wc -c)))
	$T/rpcrdma-bench server --provider verbs --device $DEV --listen $IP:$port --poll $1 --once >/tmp/rbs.out 2>&1 &
	spid=$!
	i=0
	while ! grep -q "listening on" /tmp/rbs.out && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	timeout 60 $T/rpcrdma-bench client --provider verbs --device $DEV --addr $IP:$port --mix ${2:-null} --depth 1 \
		--duration 2s --warmup 300ms --poll $1 -q --out /tmp/rblat.json >/dev/null 2>&1
	crc=$?
	i=0
	while kill -0 $spid 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	kill $spid 2>/dev/null
	wait $spid
	[ $crc -eq 0 ] || { cat /tmp/rbs.out >&2; return 1; }
	$T/rpcrdma-bench report --format csv /tmp/rblat.json 2>/dev/null | awk -F, '
		NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		{ p50 = $c["p50_ns"]; mn = $c["min_ns"] }
		END { if (p50 == "") exit 1; printf "p50_us=%.2f min_us=%.2f\n", p50 / 1000, mn / 1000 }'
}
# Interleaved per size, so both see the same background load, in two rounds: the host's
# table keeps each tool's best round (background load only ever adds time).
step latency && for round in 1 2; do
	for s in 64 1024 4096; do
		ts "=== latency $s B, round $round: ib_send_lat -R"
		# perftest is the yardstick, not under test: if its clock calibration keeps failing
		# (it does under TCG on a loaded host), the table shows n/a rather than vmtest failing.
		if t=$(perftest_lat $s); then
			echo "VMTEST: PASS ib_send_lat-$s/round$round"
			echo "VMTEST: LAT perftest size=$s $t"
		else
			echo "VMTEST: WARN ib_send_lat-$s/round$round gave no result (see above)"
		fi
		ts "=== latency $s B, round $round: pingpong (verbs provider)"
		timeout 120 $T/pingpong -sizes $s -iters 1000
		result "pingpong-$s/round$round" $?
	done
	# The tool's NULL RPC in each poll mode, beside perftest's 64 B Send round trip.
	for m in busy event hybrid; do
		ts "=== latency NULL RPC, round $round: rpcrdma-bench server + client, --poll $m"
		if t=$(rb_lat $m); then
			echo "VMTEST: PASS rpcrdma-bench-null-$m/round$round"
			echo "VMTEST: LAT rpcrdma-bench poll=$m $t"
		else
			echo "VMTEST: FAIL rpcrdma-bench-null-$m/round$round"
			FAILS=$((FAILS + 1))
		fi
	done
	# ECHO of 1 KiB and 4 KiB each way (short, within the 4 KiB threshold at 1 KiB; a Reply
	# chunk at 4 KiB), beside perftest's Send round trip of the same size.
	for mix in echo/1k echo/4k; do
		ts "=== latency $mix RPC, round $round: rpcrdma-bench server + client, --poll hybrid"
		if t=$(rb_lat hybrid $mix); then
			echo "VMTEST: PASS rpcrdma-bench-$mix/round$round"
			echo "VMTEST: LAT rpcrdma-bench poll=hybrid mix=$mix $t"
		else
			echo "VMTEST: FAIL rpcrdma-bench-$mix/round$round"
			FAILS=$((FAILS + 1))
		fi
	done
done
if step latency; then
ts "=== latency, event-driven (CQ.Wait on the completion channel), for comparison"
timeout 120 $T/pingpong -sizes 64,4096 -iters 500 -events
result pingpong-events $?
fi
ts "suite done: $FAILS failures"
exit $FAILS
