# The fanin step of guest.sh (sourced there: uses its T, R, IP, DEV, ts, result and keep): the
# fan-in under mpirun inside the guest, built with -tags verbs,mpi:
#   1. a server rank and 2 client ranks over rxe0;
#   2. 2 ranks of --program nfs3, then of nfs4, against knfsd (started by guest.sh), each on its
#      own files.
# Each results file must hold every client rank, its merged count the sum of theirs, and no
# error.
M=$T/rpcrdma-bench-mpi
# Open MPI as root on one host, without ssh or shared memory: TCP between the ranks.
mpirun="mpirun --allow-run-as-root --oversubscribe --mca plm isolated --mca btl self,tcp --mca pml ob1"

# fanin_check FILE CLIENTS: every client rank measured, the merged count is their sum, no
# point or rank recorded an error.
fanin_check() {
	jq -e --argjson n "$2" '.status.state == "complete" and (.points[0] as $p | ($p.fanin.ranks | length) == $n and
		$p.rtt.count == ([$p.fanin.ranks[].point.rtt.count] | add) and all($p.fanin.ranks[]; .point.rtt.count > 0) and
		($p.errors | length) == 0 and all($p.fanin.ranks[]; (.point.errors | length) == 0))' "$1" >/dev/null
	rc=$?
	jq -r '.points[0] | "  \(.fanin.ranks | length) client ranks, \(.rtt.count) RPCs, \(.throughput.rpc_per_s | floor) RPC/s, skew \(.fanin.skew_ns / 1000 | floor) µs, overlap \(.fanin.overlap * 1000 | floor / 10)%, Jain \(.fanin.jain_index * 1000 | floor / 1000)"' "$1" || true
	return $rc
}

# fanin_step NAME NP FLAGS...: mpirun -np NP fanin FLAGS, then fanin_check of its 2 client ranks.
fanin_step() {
	name=$1 np=$2
	shift 2
	timeout 180 $mpirun -np "$np" $M fanin --provider verbs --device $DEV "$@" --depth 4 --duration 1s --warmup 300ms \
		--verify --quiet --out $R/$name.json >/tmp/$name.log 2>&1
	frc=$?
	cat /tmp/$name.log
	fanin_check $R/$name.json 2
	chk=$?
	[ $frc -eq 0 ] && [ $chk -eq 0 ]
	result $name $?
	keep $R/$name.json
}

ts "=== fanin: a server rank and 2 client ranks under mpirun on $DEV"
fanin_step fanin-rxe 3 --listen $IP:0

ts "=== fanin: 2 ranks of --program nfs3 against knfsd on $DEV"
for r in 0 1; do
	$T/nfsfile -size 1m /export/rpcrdma-bench.dat.$r /export/rpcrdma-bench.scratch.$r
done
fanin_step fanin-knfsd 2 --addr $IP --program nfs3 --nfs-export $IP:/export --nfs-mountd 20048 --mix read/4k:2,write/4k:1,getattr:1

ts "=== fanin: 2 ranks of --program nfs4 against knfsd on $DEV"
fanin_step fanin-knfsd-nfs4 2 --addr $IP --program nfs4 --mix read/4k:2,write/4k:1,getattr:1
