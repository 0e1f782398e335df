#!/bin/sh
# The fan-in under Slurm's srun, on a single-node Slurm this script starts and stops itself
# (munge, slurmctld and slurmd as root, no systemd), over the soft provider: 1 server rank and
# 3 client ranks, then 4 ranks in pairs, then 4 ranks of which one client rank is killed
# mid-run, then the fault steps (strays, a stopped client rank, a stopped server rank, rank 0
# killed); each results file is checked as scripts/mpitest.sh checks it. Debian's Open MPI
# initialises under srun through PMIx (--mpi=pmix). As root it installs slurm-wlm, munge,
# Open MPI and jq. Usage: scripts/slurmtest.sh [DURATION], 3s by default.
set -eu
GO=${GO:-go}
DUR=${1:-3s}
need() { command -v "$1" >/dev/null 2>&1; }
if ! need srun || ! need slurmctld || ! need munged || ! need mpirun || ! need jq || ! pkg-config --exists mpi-c; then
	if [ "$(id -u)" = 0 ] && need apt-get; then
		apt-get update -qq
		# The packages' scripts would start munge and Slurm as services, which a container
		# without an init cannot do (and this script starts them itself): policy-rc.d says no.
		if [ ! -e /usr/sbin/policy-rc.d ]; then
			printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
			chmod +x /usr/sbin/policy-rc.d
			DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm munge openmpi-bin libopenmpi-dev jq pkg-config >/dev/null
			rm -f /usr/sbin/policy-rc.d
		else
			DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm munge openmpi-bin libopenmpi-dev jq pkg-config >/dev/null
		fi
	else
		echo "slurmtest: needs root to install and start Slurm (apt-get install slurm-wlm munge openmpi-bin libopenmpi-dev jq)" >&2
		exit 1
	fi
fi
[ "$(id -u)" = 0 ] || { echo "slurmtest: starts munged, slurmctld and slurmd: run it as root" >&2; exit 1; }
fail() { echo "slurmtest: $*" >&2; exit 1; }
dir=$(mktemp -d)
host=$(hostname -s)
cleanup() {
	[ -f "$dir/slurmd.pid" ] && kill "$(cat "$dir/slurmd.pid")" 2>/dev/null || true
	[ -f "$dir/slurmctld.pid" ] && kill "$(cat "$dir/slurmctld.pid")" 2>/dev/null || true
	sleep 1
	rm -rf "$dir"
}
trap cleanup EXIT

# munge: Slurm's authentication, a key and a daemon running as the munge user.
mkdir -p /etc/munge /run/munge /var/lib/munge /var/log/munge
[ -s /etc/munge/munge.key ] || dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 2>/dev/null
chown -R munge:munge /etc/munge /run/munge /var/lib/munge /var/log/munge
chmod 0700 /etc/munge && chmod 0400 /etc/munge/munge.key
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
	runuser -u munge -- /usr/sbin/munged
	for _ in $(seq 1 50); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
fi

# A one-node cluster: no cgroups (22.05 would need a cgroup.conf), tasks may share CPUs.
mkdir -p "$dir/state" "$dir/spool"
cat >"$dir/slurm.conf" <<EOF
ClusterName=rpcrdmabench
SlurmctldHost=$host
SlurmUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ReturnToService=2
MpiDefault=none
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE
EOF
export SLURM_CONF="$dir/slurm.conf"
slurmctld -i
slurmd
for i in $(seq 1 100); do
	state=$(sinfo -h -n "$host" -o %T 2>/dev/null || true)
	[ "$state" = idle ] && break
	[ "$i" = 100 ] && { cat "$dir/slurmctld.log" "$dir/slurmd.log" >&2 || true; fail "the node never became idle (state: $state)"; }
	sleep 0.2
done

bin=$dir/rpcrdma-bench
CGO_ENABLED=1 $GO build -tags mpi -o "$bin" ./cmd/rpcrdma-bench
# -O: more tasks than CPUs; --mpi=pmix: how Debian's Open MPI learns its rank under srun.
srun="srun -n 4 -O --mpi=pmix"
flags="--duration $DUR --warmup 500ms --poll event --quiet"
. "$(dirname "$0")/fanincheck.sh"

echo "slurmtest: srun, 1 server rank + 3 client ranks"
timeout 120 $srun "$bin" fanin $flags --out "$dir/fanin.json" >"$dir/fanin.log" 2>&1 || { cat "$dir/fanin.log" >&2; fail "srun -n 4 fanin failed"; }
check "$dir/fanin.json" 3
jq -e '.status.state == "complete" and (.points[0].fanin.server_ranks | map(.rank)) == [0]' "$dir/fanin.json" >/dev/null || fail "fanin.json: not complete with server rank 0"

echo "slurmtest: srun, 4 ranks in pairs"
timeout 120 $srun "$bin" fanin --pairs $flags --out "$dir/pairs.json" >"$dir/pairs.log" 2>&1 || { cat "$dir/pairs.log" >&2; fail "srun -n 4 fanin --pairs failed"; }
check "$dir/pairs.json" 2

echo "slurmtest: srun, client rank 2 killed mid-run"
timeout 120 $srun "$bin" fanin --duration 30s --warmup 500ms --poll event --quiet --out "$dir/killed.json" >"$dir/killed.log" 2>&1 &
launched=$!
killrank 2 SLURM_PROCID "$launched"
if wait "$launched"; then fail "the run with a killed rank succeeded"; fi
checkkilled "$dir/killed.json" "$dir/killed.log"

faults slurmtest SLURM_PROCID $srun
echo "slurmtest: ok"
