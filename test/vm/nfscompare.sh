# The nfscompare step of guest.sh (make vmbench; sourced there: uses its IP, DEV, B, R, ts and
# result): NFSv3 against NFSv4.1 on knfsd over rxe0, per operation, the same sizes, the same
# boot, the two alternated (their order swapped every round) for NFSCMP_ROUNDS rounds (default
# 5). Each run is one depth-1 point of NFSCMP_COUNT RPCs (default 1500) after a 200 ms
# warm-up; it prints
#   NFSCMP op=OP v=3|4 round=R p50_us=.. p99_us=.. rps=..
# and the host's summary gives per operation the median over the rounds and the ratio nfs4/nfs3.
# readdirplus (v3) and readdir (v4) both ask for 8 KiB of entries of the server's root.
rounds=${NFSCMP_ROUNDS:-5}
count=${NFSCMP_COUNT:-1500}
nfscmp_run() { # version op mix
	out=$R/nfscmp-v$1-$2.json
	if [ "$1" = 3 ]; then
		timeout 120 $B client --provider verbs --device $DEV --addr $IP:20049 --program nfs3 --nfs-export $IP:/export \
			--nfs-mountd 20048 --mix "$3" --depth 1 --count $count --warmup 200ms -q --out $out >/dev/null 2>&1
	else
		timeout 120 $B client --provider verbs --device $DEV --addr $IP:20049 --program nfs4 \
			--mix "$3" --depth 1 --count $count --warmup 200ms -q --out $out >/dev/null 2>&1
	fi
	rc=$?
	rtt=$(tr -d '\n ' <$out | grep -o '"rtt":{[^}]*}' | head -1)
	p50=$(echo "$rtt" | grep -o '"p50_ns":[0-9]*' | grep -o '[0-9]*$')
	p99=$(echo "$rtt" | grep -o '"p99_ns":[0-9]*' | grep -o '[0-9]*$')
	rps=$(tr -d '\n ' <$out | grep -o '"rpc_per_s":[0-9.]*' | head -1 | grep -o '[0-9.]*$')
	echo "NFSCMP op=$2 v=$1 round=$r p50_us=$(awk -v n="${p50:-0}" 'BEGIN { printf "%.1f", n / 1000 }') p99_us=$(awk -v n="${p99:-0}" 'BEGIN { printf "%.1f", n / 1000 }') rps=${rps:-0} rc=$rc"
	return $rc
}
fails=0
r=1
while [ $r -le $rounds ]; do
	ts "=== nfscompare: round $r of $rounds"
	for op in null getattr lookup read-4k read-64k write-4k write-64k commit readdir-8k; do
		case $op in
		read-4k) m=read/4k ;; read-64k) m=read/64k ;; write-4k) m=write/4k ;; write-64k) m=write/64k ;;
		readdir-8k) m3=readdirplus/8k m4=readdir/8k ;;
		*) m=$op ;;
		esac
		[ $op = readdir-8k ] || { m3=$m m4=$m; }
		if [ $((r % 2)) -eq 1 ]; then
			nfscmp_run 3 $op $m3 || fails=$((fails + 1))
			nfscmp_run 4 $op $m4 || fails=$((fails + 1))
		else
			nfscmp_run 4 $op $m4 || fails=$((fails + 1))
			nfscmp_run 3 $op $m3 || fails=$((fails + 1))
		fi
	done
	r=$((r + 1))
done
result nfscompare $fails
