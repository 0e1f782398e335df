#!/usr/bin/env bash
# make vmtest: real RDMA without RDMA hardware. Boots Debian's kernel under QEMU (TCG) with an
# initramfs holding this project's test binaries, creates a soft-RoCE device (rdma_rxe) in the
# guest and runs there: the verbs provider's tests, the knfsd-over-RDMA interop test, and
# perftest's ib_send_lat next to the project's own ping-pong. Exits non-zero on any failure.
#
# Needs root on a fresh machine (it installs the Debian packages of deps.sh); caches the
# kernel under $VMDIR. The guest's console goes to $VMDIR/guest.log.
#
# env: VMDIR (default build/vm)  VMTIMEOUT (seconds, default 900)  VERBOSE=1 (whole console)
#      QEMU_MEM (MiB, default 1024)  QEMU_SMP (default 2)
set -euo pipefail
cd "$(dirname "$0")/../.."
HERE=test/vm
export VMDIR=${VMDIR:-build/vm}
start=$(date +%s)
mkdir -p "$VMDIR/bin"

"$HERE/deps.sh"
"$HERE/fetch-kernel.sh"

echo "vmtest: building test binaries (cgo, -tags verbs)"
export CGO_ENABLED=1
GO=${GO:-go}
$GO test -c -tags verbs -o "$VMDIR/bin/verbs.test" ./datapath/verbs
$GO test -c -tags verbs -o "$VMDIR/bin/knfsd.test" ./test/vm/knfsd
$GO build -tags verbs -o "$VMDIR/bin/pingpong" ./test/vm/pingpong

"$HERE/initramfs.sh"

KROOT=$VMDIR/kernel/root
KVER=$(ls "$KROOT/lib/modules" | head -1)
LOG=$VMDIR/guest.log
echo "vmtest: booting $KVER under QEMU TCG (console: $LOG)"
# KVM cannot boot a stock kernel on this machine kind (paravirtual KVM host), hence TCG.
set +e
timeout "${VMTIMEOUT:-900}" qemu-system-x86_64 -accel tcg -cpu max -m "${QEMU_MEM:-1024}" -smp "${QEMU_SMP:-2}" \
	-nographic -no-reboot -nodefaults -serial stdio \
	-kernel "$KROOT/boot/vmlinuz-$KVER" -initrd "$VMDIR/initramfs.cpio.gz" \
	-append "console=ttyS0 panic=-1 quiet loglevel=4" \
	-netdev user,id=n0,restrict=on -device virtio-net-pci,netdev=n0 \
	</dev/null 2>&1 | tr -d '\r' | tee "$LOG" |
	if [ "${VERBOSE:-}" = 1 ]; then cat; else grep --line-buffered -E '^\[T\+|^VMTEST:|^(--- )?FAIL|^PINGPONG|^panic|Kernel panic'; fi
qrc=${PIPESTATUS[0]}
set -e

echo
echo "=== vmtest summary (guest log: $LOG)"
grep -E '^VMTEST: (PASS|FAIL)' "$LOG" | sed 's/^VMTEST: /  /' || true
fails=$(grep -c '^VMTEST: FAIL' "$LOG" || true)
if ! grep -q '^VMTEST: EXIT' "$LOG"; then
	echo "  FAIL guest did not finish (qemu exit $qrc; timeout is ${VMTIMEOUT:-900}s)"
	fails=$((fails + 1))
fi
echo
echo "=== latency, rxe0 under TCG (same boot): our SEND/RECV ping-pong vs perftest ib_send_lat -R"
echo "    perftest reports half round trips: its RTT is 2 x t_typical (median)."
awk '
	/^VMTEST: LAT perftest/ { split($4, a, "="); split($5, b, "="); pt[a[2]] = b[2] }
	/^PINGPONG/ { for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] } ours[f["size"]] = f["rtt_p50_us"]; order[++n] = f["size"] }
	END {
		printf "    %8s  %22s  %20s  %8s\n", "size", "perftest RTT (2xtyp) us", "ours RTT p50 us", "ratio"
		for (i = 1; i <= n; i++) {
			z = order[i]
			if (z in pt && pt[z] > 0) printf "    %8s  %22.2f  %20.2f  %8.2f\n", z, 2 * pt[z], ours[z], ours[z] / (2 * pt[z])
			else printf "    %8s  %22s  %20.2f  %8s\n", z, "n/a", ours[z], "n/a"
		}
	}' "$LOG"
echo
echo "vmtest: $((fails)) failure(s), wall time $(($(date +%s) - start)) s"
[ "$fails" -eq 0 ]
