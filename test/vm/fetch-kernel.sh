#!/usr/bin/env bash
# Downloads Debian's current kernel image package (the one linux-image-amd64 depends on) into
# $VMDIR/kernel and extracts it there. Nothing is installed on the host. Cached: a second run
# with the package already extracted does nothing.
#
# env: VMDIR (default build/vm)  KPKG (default: what linux-image-amd64 depends on)
set -euo pipefail
VMDIR=${VMDIR:-build/vm}
KDIR=$VMDIR/kernel
mkdir -p "$KDIR"
if [ -f "$KDIR/root/.done" ]; then exit 0; fi
KPKG=${KPKG:-$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/{print $2; exit}')}
if [ -z "$KPKG" ]; then
	[ "$(id -u)" -eq 0 ] && apt-get update -qq >/dev/null
	KPKG=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-[0-9]/{print $2; exit}')
fi
[ -n "$KPKG" ] || { echo "fetch-kernel: cannot resolve linux-image-amd64 (apt-get update?)" >&2; exit 1; }
cd "$KDIR"
if ! ls "${KPKG}"_*.deb >/dev/null 2>&1; then
	echo "vmtest: downloading $KPKG"
	apt-get download -qq "$KPKG" 2>&1 | grep -v unsandboxed || true
fi
ls "${KPKG}"_*.deb >/dev/null 2>&1 || { echo "fetch-kernel: apt-get download $KPKG failed" >&2; exit 1; }
rm -rf root
dpkg-deb -x "${KPKG}"_*.deb root
KVER=$(ls root/lib/modules | head -1)
depmod -b "$PWD/root" "$KVER"
grep -q '^CONFIG_RDMA_RXE=m' "root/boot/config-$KVER" || { echo "fetch-kernel: $KVER has no rdma_rxe module" >&2; exit 1; }
touch root/.done
echo "vmtest: kernel $KVER"
