#!/usr/bin/env bash
# Installs (as root) the Debian packages the VM suite needs, or, when not root, prints the
# command that would and fails. Idempotent: installs only what is missing, quietly.
set -euo pipefail

PKGS=(
	qemu-system-x86 busybox-static cpio kmod xz-utils zstd
	rdma-core ibverbs-providers ibverbs-utils rdmacm-utils libibverbs-dev librdmacm-dev perftest
	nfs-kernel-server nfs-common rpcbind
	gcc libc6-dev
	openmpi-bin libopenmpi-dev jq
)

missing=()
for p in "${PKGS[@]}"; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	[ "$st" = "install ok installed" ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "vmtest: missing Debian packages: ${missing[*]}" >&2
	echo "vmtest: install them as root with:" >&2
	echo "  apt-get update && apt-get install -y --no-install-recommends ${missing[*]}" >&2
	exit 1
fi
echo "vmtest: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# nfs-kernel-server's and rpcbind's postinst start services, which a container without an
# init cannot do: policy-rc.d tells invoke-rc.d not to try (only if none is in place).
if [ ! -e /usr/sbin/policy-rc.d ]; then
	printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
	chmod +x /usr/sbin/policy-rc.d
	trap 'rm -f /usr/sbin/policy-rc.d' EXIT
fi
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
