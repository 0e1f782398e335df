#!/bin/sh
# PID 1 of the test guest (busybox sh): mounts, network on eth0 (virtio-net), the RDMA stack
# with a soft-RoCE device rxe0 on eth0 and a soft-iWARP device siw0 on dummy0, then the suite
# (/opt/vmtest/guest.sh), then power off.
# busybox sh runs its own applets before $PATH, so the real ip is called by path.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
hostname guest # /etc/hosts names 10.0.2.15 so; Open MPI refuses the kernel's "(none)"
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
mkdir -p /run/rpcbind
ts() { echo "[T+$(cut -d' ' -f1 /proc/uptime)s] $*"; }
ts "init"
modprobe virtio_pci
modprobe virtio_net
/usr/sbin/ip link set lo up
i=0
while [ ! -e /sys/class/net/eth0 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
/usr/sbin/ip addr add 10.0.2.15/24 dev eth0
/usr/sbin/ip link set eth0 up
modprobe crc32_generic
modprobe rdma_rxe && modprobe ib_uverbs && modprobe rdma_ucm
rdma link add rxe0 type rxe netdev eth0 || echo "VMTEST: FAIL rdma-link-add"
ts "rxe0 ready"
# Soft-iWARP beside it, on a netdev of its own: rdma_cm picks the device by the address's
# netdev, and iWARP needs a real address (not loopback). dummy0's traffic to itself is local.
# Loading dummy creates dummy0.
modprobe dummy && /usr/sbin/ip addr add 10.0.3.15/24 dev dummy0 && /usr/sbin/ip link set dummy0 up &&
	modprobe siw && rdma link add siw0 type siw netdev dummy0 || echo "VMTEST: FAIL rdma-link-add-siw"
ts "siw0 ready"
# siw charges registered memory to RLIMIT_MEMLOCK even for root (8 MiB by default).
ulimit -l unlimited
# vmtest.run=REGEX on the kernel command line (VMTEST_RUN on the host) runs only the verbs
# tests matching it, for quick iterations.
case "$(cat /proc/cmdline)" in *vmtest.run=*) export VMTEST_RUN=$(sed 's/.*vmtest.run=\([^ ]*\).*/\1/' /proc/cmdline) ;; esac
# vmtest.steps=LIST (VMTEST_STEPS on the host) runs only those steps of guest.sh.
case "$(cat /proc/cmdline)" in *vmtest.steps=*) export VMTEST_STEPS=$(sed 's/.*vmtest.steps=\([^ ]*\).*/\1/' /proc/cmdline) ;; esac
case "$(cat /proc/cmdline)" in *vmtest.matrix_reps=*) export VMTEST_MATRIX_REPS=$(sed 's/.*vmtest.matrix_reps=\([^ ]*\).*/\1/' /proc/cmdline) ;; esac
# The host's $VMDIR/out over 9p (virtio), for files the host keeps: results, charts.
mkdir -p /out
if modprobe 9pnet_virtio && modprobe 9p && mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 out /out; then
	ts "/out: the host's share"
else
	echo "VMTEST: WARN no 9p share at /out: results stay in the guest"
fi
/opt/vmtest/guest.sh 2>&1
echo "VMTEST: EXIT rc=$?"
sync
umount /out 2>/dev/null
poweroff -f
