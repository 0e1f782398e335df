#!/usr/bin/env bash
# Builds the guest's initramfs from the host's own Debian userland: busybox, the RDMA and NFS
# server tools, the libibverbs providers, the kernel modules the guest loads (with their
# dependencies, decompressed for busybox modprobe; siw from build-siw.sh), and the test
# binaries in $VMDIR/bin.
#
# env: VMDIR (default build/vm; kernel in $VMDIR/kernel/root, output $VMDIR/initramfs.cpio.gz)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
VMDIR=$(realpath "${VMDIR:-build/vm}")
KROOT=$VMDIR/kernel/root
KVER=$(ls "$KROOT/lib/modules" | head -1)
OUT=$VMDIR/initramfs.cpio.gz
STAGE=$(mktemp -d "$VMDIR/stage.XXXXXX")
trap 'rm -rf "$STAGE"' EXIT

mkdir -p "$STAGE"/{bin,sbin,usr/bin,usr/sbin,etc,proc,sys,dev,tmp,run,var/lib/nfs,export,opt/vmtest}
mkdir -p "$STAGE"/usr/lib/x86_64-linux-gnu "$STAGE"/lib/x86_64-linux-gnu
ln -s ../run "$STAGE/var/run" # rpcbind's socket: knfsd runs no threads without it

cp /bin/busybox "$STAGE/bin/busybox"
for a in $("$STAGE/bin/busybox" --list); do
	[ -e "$STAGE/bin/$a" ] || ln -s busybox "$STAGE/bin/$a"
done
ln -s ../bin/busybox "$STAGE/sbin/modprobe" # the kernel's module autoloader runs /sbin/modprobe
ln -s ../bin/busybox "$STAGE/sbin/poweroff"

# copy_path copies a file to the same path in the stage, following symlinks.
copy_path() {
	[ -e "$STAGE$1" ] && return 0
	mkdir -p "$STAGE$(dirname "$1")"
	cp -L "$1" "$STAGE$1"
}
# copy_libs copies the shared libraries an executable needs.
copy_libs() {
	local l
	for l in $(ldd "$1" 2>/dev/null | grep -oE '/[^ ]+'); do copy_path "$l"; done
}
copy_bin() {
	local p
	p=$(command -v "$1") || { echo "initramfs: $1 not found (see test/vm/deps.sh)" >&2; exit 1; }
	copy_path "$p"
	copy_libs "$p"
}
for b in ip rdma ibv_devices ibv_devinfo ib_send_lat ib_read_lat ib_write_lat rpcbind rpc.nfsd rpc.mountd exportfs; do
	copy_bin "$b"
done

# Open MPI for the fanin step: mpirun, its components (dlopened), help texts and defaults;
# jq checks the fan-in's results files.
copy_bin mpirun
copy_bin jq
for d in /usr/lib/x86_64-linux-gnu/openmpi /usr/lib/x86_64-linux-gnu/pmix2 /etc/openmpi /usr/share/openmpi /usr/share/pmix; do
	[ -d "$d" ] || continue
	mkdir -p "$STAGE$(dirname "$d")"
	cp -a "$d" "$STAGE$d"
	for so in $(find "$d" -name '*.so*' -type f); do copy_libs "$so"; done
done

# perf, when the host has it, for the optional profile step.
if command -v perf >/dev/null; then
	copy_bin perf
fi

# libibverbs loads its providers (rxe, siw) by the driver files in /etc/libibverbs.d.
mkdir -p "$STAGE/etc/libibverbs.d"
for p in rxe siw; do
	cp /etc/libibverbs.d/$p.driver "$STAGE/etc/libibverbs.d/"
	so=$(ls /usr/lib/x86_64-linux-gnu/libibverbs/lib$p-rdmav*.so | head -1)
	copy_path "$so"
	copy_libs "$so"
done
# glibc dlopens libgcc_s for thread exit; rpcbind and mountd look up users through NSS.
for l in /lib/x86_64-linux-gnu/libgcc_s.so.1 /lib/x86_64-linux-gnu/libnss_files.so.2; do
	[ -e "$l" ] && copy_path "$l"
done

cat >"$STAGE/etc/passwd" <<'X'
root:x:0:0:root:/root:/bin/sh
_rpc:x:102:65534::/run/rpcbind:/usr/sbin/nologin
statd:x:103:65534::/var/lib/nfs:/usr/sbin/nologin
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
X
printf 'root:x:0:\nnogroup:x:65534:\n' >"$STAGE/etc/group"
printf 'hosts: files\npasswd: files\ngroup: files\n' >"$STAGE/etc/nsswitch.conf"
printf '127.0.0.1 localhost\n10.0.2.15 guest\n' >"$STAGE/etc/hosts"
for f in /etc/netconfig /etc/services /etc/protocols /etc/rpc; do [ -e "$f" ] && cp "$f" "$STAGE/etc/"; done
printf '/export *(rw,no_root_squash,insecure,fsid=0,no_subtree_check)\n' >"$STAGE/etc/exports"

# Kernel modules. crc32_generic must be loaded before rxe links can be added on 6.1. siw's
# own dependencies (ib_core, libcrc32c) are among these; dummy carries siw0's address.
MODS="crc32_generic crc32c_generic libcrc32c virtio_pci virtio_net rdma_rxe ib_uverbs rdma_ucm nfsd rpcrdma 9pnet_virtio 9p dummy"
needed=$(for m in $MODS; do
	modprobe -d "$KROOT" -S "$KVER" --show-depends "$m" | awk '$1=="insmod"{print $2}'
done | sort -u)
for f in $needed; do
	rel=${f#"$KROOT"}
	mkdir -p "$STAGE$(dirname "$rel")"
	case $f in # busybox modprobe cannot load compressed modules
	*.ko.xz) xz -dc "$f" >"$STAGE${rel%.xz}" ;;
	*.ko.zst) zstd -qdc "$f" >"$STAGE${rel%.zst}" ;;
	*) cp "$f" "$STAGE$rel" ;;
	esac
done
KM=$KROOT/lib/modules/$KVER
cp "$KM/modules.order" "$KM/modules.builtin" "$KM/modules.builtin.modinfo" "$STAGE/lib/modules/$KVER/"
# siw, built out of tree by build-siw.sh (Debian's kernel lacks it).
mkdir -p "$STAGE/lib/modules/$KVER/extra"
cp "$VMDIR/siw/$KVER/siw.ko" "$STAGE/lib/modules/$KVER/extra/"
depmod -b "$STAGE" "$KVER"

# The test binaries and the guest scripts.
for f in "$VMDIR"/bin/*; do
	cp "$f" "$STAGE/opt/vmtest/"
	copy_libs "$f"
done
cp "$HERE/guest.sh" "$HERE/cli.sh" "$HERE/nfs4.sh" "$HERE/nfs4recover.sh" "$HERE/nfscompare.sh" "$HERE/siw.sh" "$HERE/fanin.sh" "$STAGE/opt/vmtest/"
# rpcrdma.test reads its testdata when it starts: it runs in opt/vmtest/rpcrdma.
mkdir -p "$STAGE/opt/vmtest/rpcrdma"
cp -r "$HERE/../../rpcrdma/testdata" "$STAGE/opt/vmtest/rpcrdma/"
cp "$HERE/init.sh" "$STAGE/init"
chmod +x "$STAGE/init" "$STAGE/opt/vmtest/guest.sh"

(cd "$STAGE" && find . | cpio -o -H newc --quiet | gzip -1) >"$OUT.tmp"
mv "$OUT.tmp" "$OUT"
echo "vmtest: initramfs $(du -h "$OUT" | cut -f1), $(echo $needed | wc -w) modules, kernel $KVER"
