# The nfs4 step of guest.sh (sourced there: uses its T, IP, DEV, B, R, ts, result, keep and
# check_results): the tool against knfsd's NFSv4.1 over rxe0.
#   1. the nfs4 mix at depth 1 and 16 (READ verified), and READ and WRITE across the 4 KiB
#      threshold: inline below it, READ data in a Write chunk and WRITE data in a Read chunk
#      above it; a row per procedure;
#   2. delegation recalls: a read delegation held by one client, recalled over its
#      backchannel when a second client opens the file for writing: the server's
#      CB_COMPOUNDs (CB_SEQUENCE, CB_RECALL) answered on the holder's own connection, as
#      reverse-direction calls (knfsd sends no CB_NULL probe to an NFSv4.1 client);
#   3. a READ sweep over knfsd's max_req_size x the client's thresholds, answered by
#      `report --format thresholds` and drawn as a heatmap.
# guest.sh started knfsd with NFSv4.1 and a 10 s grace time (setup waits it out) and wrote
# the files: rpcrdma-bench.dat (the pattern), rpcrdma-bench.scratch, rpcrdma-bench.recall.N.

# callbacks FILE: the callbacks rows of FILE's report (proc, class, calls, ..., errors): some
# calls, no error.
callbacks() {
	$B report "$1" >/tmp/cb.out 2>&1 || { cat /tmp/cb.out; return 1; }
	awk '/^callbacks of / { on = 1; next } on && /^[^ ]/ { on = 0 }
		on && $1 != "proc" && NF >= 7 { n += $3; e += $NF; print "CALLBACKS " $1 " " $2 ": " $3 " calls, " $NF " errors" }
		END { if (n == 0) { print "check: no callbacks"; exit 1 } if (e) { print "check: " e " callback errors"; exit 1 } }' /tmp/cb.out
}

NFS4="$B client --provider verbs --device $DEV --addr $IP:20049 --program nfs4"
for d in 1 16; do
	for w in "mix nfs-mix short chunked" "read read/1k,read/64k short chunked" "write write/1k,write/64k short chunked" \
		"meta nfs-meta short" "open-close open-close short"; do
		set -- $w
		name=$1 mix=$2
		shift 2
		ts "=== nfs4: NFSv4.1 $name against knfsd, depth $d ($mix)"
		timeout 180 $NFS4 --mix $mix --depth $d --count 3000 --warmup 200ms --verify -q --out $R/nfs4-$name-d$d.json
		crc=$?
		check_results $R/nfs4-$name-d$d.json "$@"
		chk=$?
		echo "client rc=$crc check rc=$chk"
		[ $crc -eq 0 ] && [ $chk -eq 0 ]
		result nfs4-$name-d$d $?
		keep $R/nfs4-$name-d$d.json
	done
done

# The files of a directory below the server's root (guest.sh wrote 4 KiB ones in dir400),
# named through --nfs-export: its path looked up over the connection.
ts "=== nfs4: NFSv4.1 against knfsd with --nfs-export $IP:/dir400"
timeout 180 $NFS4 --nfs-export $IP:/dir400 --mix getattr,read/1k,write/1k --depth 4 --count 1000 --warmup 100ms --verify \
	-q --out $R/nfs4-export.json
crc=$?
check_results $R/nfs4-export.json short
chk=$?
echo "client rc=$crc check rc=$chk"
[ $crc -eq 0 ] && [ $chk -eq 0 ]
result nfs4-export $?
keep $R/nfs4-export.json

ts "=== nfs4: delegation recalls against knfsd"
timeout 600 $NFS4 --mix recall --count 100 --warmup 0 -q --out $R/nfs4-recall.json
crc=$?
$B report $R/nfs4-recall.json
callbacks $R/nfs4-recall.json
cbc=$?
n=$(tr -d '\n ' <$R/nfs4-recall.json | grep -o '"recalls":{"count":[0-9]*' | grep -o '[0-9]*$')
echo "client rc=$crc callbacks rc=$cbc recalls=${n:-0}"
[ $crc -eq 0 ] && [ $cbc -eq 0 ] && [ "${n:-0}" -ge 100 ]
result nfs4-recall $?
keep $R/nfs4-recall.json

for srv in 4096 16384 65536; do
	ts "=== nfs4: NFSv4.1 READ sweep against knfsd, max_req_size $srv"
	echo $srv >/proc/sys/sunrpc/svc_rdma/max_req_size
	timeout 300 $B sweep --provider verbs --device $DEV --addr $IP:20049 --program nfs4 \
		--thresholds 1k,4k,16k --sizes 1k,4k,64k,1m --depth 1 --duration 400ms --warmup 100ms \
		--verify -q --out $R/nfs4-sweep-$srv.json
	src=$?
	$B report --format thresholds $R/nfs4-sweep-$srv.json | sed "s/^/CLI nfs4-sweep-$srv: /"
	trc=$?
	check_results $R/nfs4-sweep-$srv.json short chunked
	chk=$?
	timeout 120 $B plot --dir $R/nfs4-plots-$srv --format svg $R/nfs4-sweep-$srv.json >/dev/null
	prc=$?
	echo "sweep rc=$src thresholds rc=$trc check rc=$chk plot rc=$prc"
	[ $src -eq 0 ] && [ $trc -eq 0 ] && [ $chk -eq 0 ] && [ $prc -eq 0 ]
	result nfs4-sweep-$srv $?
	keep $R/nfs4-sweep-$srv.json $R/nfs4-plots-$srv
done
echo 4096 >/proc/sys/sunrpc/svc_rdma/max_req_size

NFS4_RECALLS_MEASURED=1 . $T/nfs4recover.sh
