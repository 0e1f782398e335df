# The cli step of guest.sh (sourced there: uses its T, IP, DEV, B, R, ts, result, keep, server_client and
# check_results): the tool, cmd/rpcrdma-bench built with -tags verbs, run as users run it, on
# rxe0.
#   1. `server` and `client` as two processes, the client writing a results file;
#   2. `client --program nfs` against knfsd (started by guest.sh on port 20049), NULL calls;
#   3. a short `sweep` with a server in the process, drawn by `plot`.
# Every results file must re-render with `report`, with RPCs in the classes the workload
# implies and no errors; files and charts are copied to /out (the host's $VMDIR/out).

# 1. server and client in two processes.
ts "=== cli: rpcrdma-bench server + client as two processes on $DEV"
PORT=20050
server_client cli-server-client $DEV $IP $PORT 2s 500ms $R/client-verbs.json

# 1b. the same in the event and hybrid poll modes (both ends blocking on the completion
# channel when idle, or after a spin): every class, 0 errors.
for m in event hybrid; do
	ts "=== cli: server + client with --poll $m on $DEV"
	PORT=$((PORT + 1))
	$B server --provider verbs --device $DEV --listen $IP:$PORT --once --credits 16 --max-payload 256k --verify \
		--poll $m >/tmp/server.out 2>&1 &
	spid=$!
	i=0
	while ! grep -q "listening on" /tmp/server.out && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	timeout 120 $B client --provider verbs --device $DEV --addr $IP:$PORT --depth 8 --duration 2s --warmup 500ms \
		--verify --poll $m -q --out $R/client-verbs-$m.json
	crc=$?
	i=0
	while kill -0 $spid 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	kill $spid 2>/dev/null
	wait $spid
	src=$?
	sed 's/^/server: /' /tmp/server.out
	check_results $R/client-verbs-$m.json short chunked long
	chk=$?
	echo "client rc=$crc server rc=$src check rc=$chk"
	[ $crc -eq 0 ] && [ $src -eq 0 ] && [ $chk -eq 0 ]
	result cli-server-client-$m $?
	keep $R/client-verbs-$m.json
done

# 2. the client against knfsd: NULL calls of NFSv3, then READ, WRITE and GETATTR on the
# export's files (guest.sh wrote them), and the nfs-mix preset (a row per procedure), at
# depth 1 and 16, READ data verified. Below the 4 KiB
# threshold a READ reply and a WRITE call go inline (short); above it READ's data comes back
# in a Write chunk and WRITE's goes in a Read chunk (chunked), as with the Linux client.
ts "=== cli: rpcrdma-bench client --program nfs3 against knfsd"
timeout 120 $B client --provider verbs --device $DEV --addr $IP:20049 --program nfs3 --mix null --depth 16 \
	--duration 2s --warmup 500ms -q --out $R/client-knfsd.json
crc=$?
check_results $R/client-knfsd.json short
chk=$?
echo "client rc=$crc check rc=$chk"
[ $crc -eq 0 ] && [ $chk -eq 0 ]
result cli-client-knfsd $?
keep $R/client-knfsd.json
for d in 1 16; do
	for w in "read read/1k,read/64k short chunked" "write write/1k,write/64k short chunked" "getattr getattr short" "mix nfs-mix short chunked"; do
		set -- $w
		name=$1 mix=$2
		shift 2
		ts "=== cli: NFSv3 $name against knfsd, depth $d ($mix)"
		timeout 120 $B client --provider verbs --device $DEV --addr $IP:20049 --program nfs3 --nfs-export $IP:/export --nfs-mountd 20048 \
			--mix $mix --depth $d --count 2000 --warmup 200ms --verify -q --out $R/knfsd-$name-d$d.json
		crc=$?
		check_results $R/knfsd-$name-d$d.json "$@"
		chk=$?
		echo "client rc=$crc check rc=$chk"
		[ $crc -eq 0 ] && [ $chk -eq 0 ]
		result cli-knfsd-$name-d$d $?
		keep $R/knfsd-$name-d$d.json
	done
done

# 2b. a READ sweep against knfsd over both ends' inline thresholds: the client's through its
# private data (--thresholds), knfsd's by its max_req_size before each sweep's connections.
# The results record both sides' advertised sizes; report --format thresholds answers which
# client threshold suits each server setting, and plot draws the heatmaps. guest.sh raised
# knfsd's max block size to 1 MiB, so 1 MiB READs are whole.
for srv in 4096 16384 65536; do
	ts "=== cli: NFSv3 READ sweep against knfsd, max_req_size $srv"
	echo $srv >/proc/sys/sunrpc/svc_rdma/max_req_size
	timeout 300 $B sweep --provider verbs --device $DEV --addr $IP:20049 --program nfs3 --nfs-export $IP:/export \
		--nfs-mountd 20048 --thresholds 1k,4k,16k --sizes 1k,4k,64k,1m --depth 1 --duration 400ms --warmup 100ms \
		--verify -q --out $R/knfsd-sweep-$srv.json
	src=$?
	$B report --format thresholds $R/knfsd-sweep-$srv.json | sed "s/^/CLI knfsd-sweep-$srv: /"
	trc=$?
	check_results $R/knfsd-sweep-$srv.json short chunked
	chk=$?
	timeout 120 $B plot --dir $R/knfsd-plots-$srv --format svg $R/knfsd-sweep-$srv.json >/dev/null
	prc=$?
	echo "sweep rc=$src thresholds rc=$trc check rc=$chk plot rc=$prc; knfsd advertised: $(tr -d '\n ' <$R/knfsd-sweep-$srv.json | grep -o '"peer_private_data":{[^}]*}' | head -1)"
	[ $src -eq 0 ] && [ $trc -eq 0 ] && [ $chk -eq 0 ] && [ $prc -eq 0 ]
	result cli-knfsd-sweep-$srv $?
	keep $R/knfsd-sweep-$srv.json $R/knfsd-plots-$srv
done
echo 4096 >/proc/sys/sunrpc/svc_rdma/max_req_size

# 3. a short sweep (a server in the process) and its charts, as SVG: a 300 dpi PNG takes tens of
# seconds on the emulated CPU, and the host's tests draw PNGs.
ts "=== cli: rpcrdma-bench sweep on $DEV, then plot"
# Points of 1.5 s: under TCG, busy pollers in the guest starve rxe's kernel work for hundreds
# of ms at a time, and a point that completes no RPC fails the sweep (as it should).
timeout 240 $B sweep --provider verbs --device $DEV --thresholds 1k,4k,16k --sizes 256,2k,8k,32k --depth 8 \
	--duration 1500ms --warmup 300ms --verify -q --out $R/sweep.json
src=$?
$B report --format switches $R/sweep.json >/tmp/switches.out 2>&1
wrc=$?
sed 's/^/CLI sweep.json: /' /tmp/switches.out
check_results $R/sweep.json short long
chk=$?
timeout 120 $B plot --dir $R/plots --format svg $R/sweep.json
prc=$?
ncharts=$(ls $R/plots/*.svg 2>/dev/null | wc -l)
echo "sweep rc=$src switches rc=$wrc check rc=$chk plot rc=$prc, $ncharts SVG charts: $(ls $R/plots 2>/dev/null | tr '\n' ' ')"
[ $src -eq 0 ] && [ $wrc -eq 0 ] && [ $chk -eq 0 ] && [ $prc -eq 0 ] && [ "$ncharts" -gt 0 ]
result cli-sweep-plot $?
keep $R/sweep.json $R/plots
