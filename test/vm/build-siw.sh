#!/usr/bin/env bash
# Builds siw.ko (soft-iWARP) for the guest's kernel. Debian's kernels are configured without it
# (CONFIG_RDMA_SIW is not set), so it is compiled out of tree: its sources from Debian's
# linux-source package of the kernel's exact version, against that kernel's linux-headers
# package (installed on the host as root, like deps.sh's packages). Cached: the module lands in
# $VMDIR/siw/<kernel version>/siw.ko and a second run with it there does nothing.
#
# env: VMDIR (default build/vm; the kernel fetch-kernel.sh extracted in $VMDIR/kernel)
set -euo pipefail
VMDIR=$(realpath "${VMDIR:-build/vm}")
KDEB=$(ls "$VMDIR"/kernel/linux-image-*.deb | head -1)
KVER=$(ls "$VMDIR/kernel/root/lib/modules" | head -1)
OUT=$VMDIR/siw/$KVER
[ -f "$OUT/siw.ko" ] && exit 0

# The source package of the same upstream release and Debian revision as the kernel image:
# siw's sources must match the headers the module is checked against (symbol versions).
VER=$(dpkg-deb -f "$KDEB" Version)            # e.g. 6.1.192-2
SRCPKG=linux-source-$(echo "$KVER" | cut -d. -f1,2) # e.g. linux-source-6.1
HDRPKG=linux-headers-$KVER

if ! dpkg-query -W -f='${Status}' "$HDRPKG" 2>/dev/null | grep -q 'install ok installed' ||
	! command -v make >/dev/null; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "vmtest: siw needs $HDRPKG and make: as root, apt-get install -y --no-install-recommends $HDRPKG make" >&2
		exit 1
	fi
	echo "vmtest: installing $HDRPKG make"
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -qq --no-install-recommends "$HDRPKG=$VER" make >/dev/null ||
		{ apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends "$HDRPKG=$VER" make >/dev/null; }
fi

W=$VMDIR/siw/build
mkdir -p "$W"
cd "$W"
if ! ls "${SRCPKG}_${VER}"_*.deb >/dev/null 2>&1; then
	echo "vmtest: downloading $SRCPKG $VER (siw's sources)"
	apt-get download -qq "$SRCPKG=$VER" 2>&1 | grep -v unsandboxed || true
fi
ls "${SRCPKG}_${VER}"_*.deb >/dev/null 2>&1 || { echo "build-siw: apt-get download $SRCPKG=$VER failed" >&2; exit 1; }
# Only drivers/infiniband/sw/siw out of the whole tree (a tarball inside the package).
rm -rf src
mkdir src
dpkg-deb --fsys-tarfile "${SRCPKG}_${VER}"_*.deb | tar -xO "./usr/src/$SRCPKG.tar.xz" |
	tar -xJ -C src --strip-components=1 --wildcards "$SRCPKG/drivers/infiniband/sw/siw/*"
echo "vmtest: building siw.ko for $KVER"
make -C "/usr/src/linux-headers-$KVER" M="$W/src/drivers/infiniband/sw/siw" CONFIG_RDMA_SIW=m modules \
	>"$W/make.log" 2>&1 || { tail -30 "$W/make.log" >&2; echo "build-siw: make failed (log: $W/make.log)" >&2; exit 1; }
mkdir -p "$OUT"
strip --strip-debug -o "$OUT/siw.ko" src/drivers/infiniband/sw/siw/siw.ko
# The module is the cache: the sources and their package (140 MB) are not kept.
cd "$VMDIR/siw"
rm -rf "$W"
modinfo -F vermagic "$OUT/siw.ko" | grep -q "^$KVER " || { echo "build-siw: siw.ko's vermagic is not $KVER" >&2; exit 1; }
echo "vmtest: siw.ko for $KVER"
