#!/usr/bin/env bash
# make vmtest: real RDMA without RDMA hardware. Boots Debian's kernel under QEMU (TCG) with an
# initramfs holding this project's test binaries, creates a soft-RoCE device (rdma_rxe) and a
# soft-iWARP device (siw, built by build-siw.sh) in the guest and runs there: the verbs
# provider's tests, the knfsd-over-RDMA interop test, the tool on both devices, and perftest
# (ib_send_lat, ib_read_lat, ib_write_lat) next to our ping-pong and the tool. Exits non-zero
# on any failure.
#
# Needs root on a fresh machine (it installs the Debian packages of deps.sh and siw's build
# needs); caches the kernel and siw.ko under $VMDIR. The guest's console goes to $VMDIR/guest.log.
#
# env: VMDIR (default build/vm)  VMTIMEOUT (seconds, default 1500)  VERBOSE=1 (whole console)
#      QEMU_MEM (MiB, default 1024)  QEMU_SMP (default 2)
#      VMTEST_RUN=REGEX (only the verbs provider tests matching it, for quick iterations)
#      VMTEST_RACE=1 (the verbs provider tests with the race detector)
#      VMTEST_STEPS=LIST (only these guest steps: verbs,bench,matrix,knfsd,cli,nfs4,nfs4recover,nfscompare,siw,fanin,latency)
#      VMTEST_MATRIX_REPS (repetitions of each class matrix case, default 8)
#      RPCRDMA_BENCH_BIN (a prebuilt rpcrdma-bench -tags verbs for the cli step, when this
#      tree has no cmd/rpcrdma-bench)
set -euo pipefail
cd "$(dirname "$0")/../.."
HERE=test/vm
export VMDIR=${VMDIR:-build/vm}
start=$(date +%s)
mkdir -p "$VMDIR/bin"

"$HERE/deps.sh"
"$HERE/fetch-kernel.sh"
"$HERE/build-siw.sh"

echo "vmtest: building test binaries (cgo, -tags verbs)"
export CGO_ENABLED=1
GO=${GO:-go}
# VMTEST_RACE=1 builds the provider's tests with the race detector.
# pingpong: the ping-pong's C loop (RunPingPong), a lab instrument outside the provider proper.
$GO test -c -tags verbs,pingpong ${VMTEST_RACE:+-race} -o "$VMDIR/bin/verbs.test" ./datapath/verbs
$GO test -c -tags verbs,verbs_noannot -o "$VMDIR/bin/verbs-noannot.test" ./datapath/verbs
$GO test -c -tags verbs -o "$VMDIR/bin/knfsd.test" ./test/vm/knfsd
$GO test -c -tags verbs -o "$VMDIR/bin/transport.test" ./test/vm/transport
$GO build -tags verbs,pingpong -o "$VMDIR/bin/pingpong" ./test/vm/pingpong
CGO_ENABLED=0 $GO build -o "$VMDIR/bin/nfsfile" ./test/vm/nfsfile
# The protocol engine alone (soft provider, pure Go) and the workload Driver alone (a fake
# client): what their code costs on the guest's CPU.
CGO_ENABLED=0 $GO test -c -o "$VMDIR/bin/rpcrdma.test" ./rpcrdma
CGO_ENABLED=0 $GO test -c -o "$VMDIR/bin/workloads.test" ./workloads
rm -f "$VMDIR/bin/rpcrdma-bench"
if [ -d cmd/rpcrdma-bench ]; then
	$GO build -tags verbs -o "$VMDIR/bin/rpcrdma-bench" ./cmd/rpcrdma-bench
	$GO build -tags verbs,mpi -o "$VMDIR/bin/rpcrdma-bench-mpi" ./cmd/rpcrdma-bench
elif [ -n "${RPCRDMA_BENCH_BIN:-}" ]; then
	cp "$RPCRDMA_BENCH_BIN" "$VMDIR/bin/rpcrdma-bench"
else
	echo "vmtest: no cmd/rpcrdma-bench in this tree: the cli step is skipped"
fi
# Files the guest hands back (results, charts) arrive here over 9p.
OUT=$VMDIR/out
rm -rf "$OUT"
mkdir -p "$OUT"

"$HERE/initramfs.sh"

KROOT=$VMDIR/kernel/root
KVER=$(ls "$KROOT/lib/modules" | head -1)
LOG=$VMDIR/guest.log
echo "vmtest: booting $KVER under QEMU TCG (console: $LOG)"
# TCG (software emulation) rather than KVM: it needs no /dev/kvm, so the suite runs on any
# x86-64 Linux machine, virtual ones and CI runners included. The guest keeps time with the
# TSC: left to itself it picks the HPET, which the vDSO cannot read, so every clock read of
# every tool (Go's nanotime, perftest's gettimeofday) became a system call and an emulated
# device access, 6 % of the guest's CPU in a profile of a NULL RPC run.
set +e
timeout "${VMTIMEOUT:-1500}" qemu-system-x86_64 -accel tcg -cpu max -m "${QEMU_MEM:-1024}" -smp "${QEMU_SMP:-2}" \
	-nographic -no-reboot -nodefaults -serial stdio \
	-kernel "$KROOT/boot/vmlinuz-$KVER" -initrd "$VMDIR/initramfs.cpio.gz" \
	-append "console=ttyS0 panic=-1 quiet loglevel=4 clocksource=tsc tsc=reliable${VMTEST_RUN:+ vmtest.run=$VMTEST_RUN}${VMTEST_STEPS:+ vmtest.steps=$VMTEST_STEPS}${VMTEST_MATRIX_REPS:+ vmtest.matrix_reps=$VMTEST_MATRIX_REPS}" \
	-netdev user,id=n0,restrict=on -device virtio-net-pci,netdev=n0 \
	-virtfs local,path="$OUT",mount_tag=out,security_model=none,id=out \
	</dev/null 2>&1 | tr -d '\r' | tee "$LOG" |
	if [ "${VERBOSE:-}" = 1 ]; then cat; else grep --line-buffered -E '^\[T\+|^VMTEST:|^(--- )?FAIL|^PINGPONG|^BenchmarkPostPoll|^BenchmarkEmptyPoll|^BenchmarkNullRPC|^BenchmarkEngine|^BenchmarkDriver|^BenchmarkNow|^MATRIX|^KNFSD|^CLI|^panic|Kernel panic'; fi
qrc=${PIPESTATUS[0]}
set -e

echo
echo "=== vmtest summary (guest log: $LOG)"
grep -E '^VMTEST: (PASS|FAIL|XFAIL|XPASS|WARN)' "$LOG" | sed 's/^VMTEST: /  /' || true
tests=$(grep -cE '^(    )*--- PASS' "$LOG" || true)
echo "  ($tests Go tests and subtests passed in the guest)"
fails=$(grep -c '^VMTEST: FAIL' "$LOG" || true)
if ! grep -q '^VMTEST: EXIT' "$LOG"; then
	echo "  FAIL guest did not finish (qemu exit $qrc; timeout is ${VMTIMEOUT:-1500}s)"
	fails=$((fails + 1))
fi
echo
echo "=== the transport's class matrix on rxe0 (test/vm/transport): requester <-> responder, one device"
grep -E '^MATRIX ' "$LOG" | sed 's/^MATRIX /    /' || true
echo
echo "=== the project's requester against knfsd over RDMA (test/vm/knfsd): NFSv3 NULL calls"
grep -E '^KNFSD ' "$LOG" | sed 's/^KNFSD /    /' || true
echo
echo "=== the tool on rxe0 (test/vm/cli.sh: two processes, against knfsd, a sweep) and on siw0 (siw.sh: siw-*); files in $OUT"
grep -E '^CLI ' "$LOG" | sed 's/^CLI /    /' || true
(cd "$OUT" && find . -type f | sort | sed 's|^\./|    |') || true
echo
if grep -q '^NFSCMP ' "$LOG"; then
	echo "=== NFSv3 against NFSv4.1 on knfsd (test/vm/nfscompare.sh): depth 1, per operation the median over the rounds"
	awk '
		{ delete f; for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		  k = f["op"] SUBSEP f["v"]; if (!(f["op"] in seen)) { seen[f["op"]] = 1; order[++n] = f["op"] }
		  p50[k, ++c50[k]] = f["p50_us"]; p99[k, ++c99[k]] = f["p99_us"]; rps[k, ++crp[k]] = f["rps"] }
		function med(arr, k, m,   i, j, t, x) { for (i = 1; i <= m; i++) x[i] = arr[k, i]
			for (i = 2; i <= m; i++) for (j = i; j > 1 && x[j - 1] > x[j]; j--) { t = x[j]; x[j] = x[j - 1]; x[j - 1] = t }
			return m == 0 ? 0 : (m % 2 ? x[(m + 1) / 2] : (x[m / 2] + x[m / 2 + 1]) / 2) }
		END { printf "    %-11s %6s %9s %9s %9s %9s %8s %8s %7s\n", "op", "rounds", "v3 p50", "v4 p50", "v3 p99", "v4 p99", "v3 RPC/s", "v4 RPC/s", "v4/v3"
			for (i = 1; i <= n; i++) { o = order[i]; k3 = o SUBSEP 3; k4 = o SUBSEP 4
				x = med(p50, k3, c50[k3]); y = med(p50, k4, c50[k4])
				printf "    %-11s %6d %9.1f %9.1f %9.1f %9.1f %8.0f %8.0f %7.2f\n", o, c50[k3], x, y, med(p99, k3, c99[k3]), med(p99, k4, c99[k4]), med(rps, k3, crp[k3]), med(rps, k4, crp[k4]), (x > 0 ? y / x : 0) } }' \
		<(grep -E '^NFSCMP ' "$LOG")
	echo
fi
echo "=== latency, rxe0 under TCG (same boot): ours against perftest, per round and the median ratio over the rounds"
echo "    Full round trips in microseconds, p50 and min. perftest reports half round trips for SEND and WRITE, so"
echo "    send-S is 2 x its t_typical (and 2 x t_min) at S bytes; read-S is ib_read_lat's figure as printed (a READ is a"
echo "    round trip); write1-S is ib_write_lat's figure as printed (one WRITE, one way). A row held to A+B is held to"
echo "    their sum: SINK (argument pulled by the server's RDMA Read) to read-S + send-64, SOURCE (result pushed by"
echo "    its RDMA Write) to write1-S + send-64. 2proc: rpcrdma-bench server + client as two processes, both"
echo "    --poll MODE (-1cpu: each process confined to a CPU of its own with taskset, the Go runtime's threads with"
echo "    it); 1proc: rpcrdma-bench run (client busy, responder hybrid); pingpong: test/vm/pingpong, a SEND"
echo "    ping-pong over the datapath with its loop in Go; pingpong-S-c: the same with the loop in C (the datapath's"
echo "    floor); pingpong-read-S and pingpong-write-S: that ping-pong at 64 B with the server's RDMA Read of S bytes"
echo "    before its answer or its RDMA Write of them with it, SINK's and SOURCE's pattern without the RPC (-c: the"
echo "    loop in C); NULL-engine: BenchmarkNullRPC (the engine at both ends in one process, no Driver). A row NAME/REF"
echo "    is row NAME's figures held to REF: ECHO 1 KiB also to send-1096, ib_send_lat with the same bytes on the wire"
echo "    (a 1096-byte call and a 1080-byte reply are two packets each at rxe's 1024-byte MTU)."
awk '
	function kv(   i, a) { delete f; for (i = 3; i <= NF; i++) { split($i, a, "="); f[a[1]] = a[2] } }
	/^VMTEST: LAT ref=/ { kv(); rp[f["ref"], f["round"]] = f["p50_us"]; rm[f["ref"], f["round"]] = f["min_us"]; if (f["round"] > nr) nr = f["round"] }
	/^VMTEST: LAT row=/ { kv(); n = f["row"]; if (!(n in vs)) order[++nrows] = n; vs[n] = f["vs"]
		op[n, f["round"]] = f["p50_us"]; om[n, f["round"]] = f["min_us"]; if (f["round"] > nr) nr = f["round"] }
	function refsum(a, n, r,   parts, k, i, t) { k = split(vs[n], parts, "+"); t = 0
		for (i = 1; i <= k; i++) { if (!((parts[i], r) in a)) return -1; t += a[parts[i], r] } return t }
	function median(x, k,   i, j, t) { for (i = 2; i <= k; i++) for (j = i; j > 1 && x[j - 1] > x[j]; j--) { t = x[j]; x[j] = x[j - 1]; x[j - 1] = t }
		return k == 0 ? "n/a" : sprintf("%.2f", k % 2 ? x[(k + 1) / 2] : (x[k / 2] + x[k / 2 + 1]) / 2) }
	function line(label, o, a, n,   r, ref, k, x, out) { k = 0; out = ""
		for (r = 1; r <= nr; r++) { ref = refsum(a, n, r)
			if (!((n, r) in o)) { out = out sprintf("  %22s", "-"); continue }
			if (ref <= 0) { out = out sprintf("  %8.2f/%-6s=%-5s", o[n, r], "n/a", "n/a"); continue }
			x[++k] = o[n, r] / ref; out = out sprintf("  %8.2f/%-6.2f=%-5.2f", o[n, r], ref, x[k]) }
		med[label, n] = median(x, k)
		printf "        %s%s   median %s\n", label, out, med[label, n] }
	END {
		for (i = 1; i <= nrows; i++) { n = order[i]; printf "    %s  vs %s\n", n, vs[n]; line("p50:", op, rp, n); line("min:", om, rm, n) }
		printf "\n    %-28s %-22s %12s %12s\n", "row", "held to", "median p50 x", "median min x"
		for (i = 1; i <= nrows; i++) { n = order[i]; printf "    %-28s %-22s %12s %12s\n", n, vs[n], med["p50:", n], med["min:", n] }
	}' "$LOG"
grep -E '^PINGPONG.* events=1' "$LOG" | awk '{ for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] } printf "    event-driven (CQ.Wait), %s B: RTT p50 %s us, min %s us\n", f["size"], f["rtt_p50_us"], f["rtt_min_us"] }' || true
echo
echo "=== BenchmarkPostPoll on rxe0 (one SEND/RECV through one CQ), posts deferred and immediate, with and without #cgo noescape/nocallback"
grep -E '^(VMTEST: BENCH|BenchmarkPostPoll|BenchmarkEmptyPoll)' "$LOG" | sed 's/^VMTEST: BENCH /    /; s/^Benchmark/      Benchmark/' || true
echo
echo "=== BenchmarkNullRPC on rxe0: a depth-1 NULL RPC, each end polling on its own thread, posts deferred and immediate (per RPC, both ends: cgo-calls, polls, empty polls, posts)"
grep -E '^BenchmarkNullRPC/' "$LOG" | sed 's/^/    /' || true
echo
echo "=== Go code alone on the guest's CPU: the engine (BenchmarkEngine, engine-ns/side; soft provider, no verbs) and the"
echo "    workload Driver around one depth-1 RPC (BenchmarkDriverDepth1, a fake client) and its clock (BenchmarkNow); the same"
echo "    binaries run natively on the host give the factor by which emulation slows Go code"
grep -E '^Benchmark(Engine|NullRPCSides|Driver|Now)' "$LOG" | sed 's/^/    /' || true
echo
if [ -s "$OUT/nullrpc.prof" ]; then
	echo
	echo "=== where a NULL RPC's time goes (BenchmarkNullRPC/posts=deferred, CPU profile): flat share per function"
	echo "    runtime._ExternalCode is time in C (libibverbs, the rxe provider) and in the kernel; runtime.cgocall and"
	echo "    runtime.asmcgocall are the crossings' own cost"
	$GO tool pprof -top -nodecount=25 "$VMDIR/bin/transport.test" "$OUT/nullrpc.prof" 2>/dev/null | sed -n '/flat%/,$p' | sed 's/^/    /' || true
fi
echo "vmtest: $((fails)) failure(s), wall time $(($(date +%s) - start)) s"
[ "$fails" -eq 0 ]
