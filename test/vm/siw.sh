# The siw step of guest.sh (sourced there: uses its T, B, R, ts, result, keep and
# check_results): the tool and the knfsd interop test on soft-iWARP, siw0 (init.sh puts it on
# dummy0, 10.0.3.15), as functional checks kept short:
#   1. `run` (the responder in the process) and 2. an in-process `sweep`, which must listen on
#      and dial siw0's address: iWARP cannot use loopback;
#   3. `server` and `client` as two processes;
#   4. knfsd (started by guest.sh; its RDMA listener takes every device): the interop test's
#      NFSv3 NULL call, then the tool's NFSv3 calls (nfs-mix) with READ data verified.
# Every results file must re-render with `report`, RPCs in the expected classes, no errors.
SDEV=siw0
SIP=10.0.3.15

ts "=== siw: the device"
rdma link show $SDEV/1
# Its GID is made of dummy0's MAC; the tool names that netdev beside it (the kernel does not).
$B devices --provider verbs
echo "RLIMIT_MEMLOCK: $(ulimit -l)"

# 0. siw gives a destroyed queue pair's number to the next one: completions the old one
# left in a shared CQ must not reach or break the new connection (a sweep's point change).
ts "=== siw: the verbs provider's queue pair number reuse test on $SDEV"
timeout 60 $T/verbs.test -test.v -test.count=1 -test.run "TestIntegrationReusedQPNumber/$SDEV\$"
result siw-qpn-reuse $?

# 1. run: requester and responder in one process.
ts "=== siw: rpcrdma-bench run on $SDEV"
timeout 60 $B run --provider verbs --device $SDEV --depth 4 --duration 1s --warmup 200ms --verify -q \
	--out $R/siw-run.json
rrc=$?
check_results $R/siw-run.json short chunked long
chk=$?
echo "run rc=$rrc check rc=$chk"
[ $rrc -eq 0 ] && [ $chk -eq 0 ]
result siw-run $?
keep $R/siw-run.json

# 2. an in-process sweep: two thresholds, a size each side of them.
ts "=== siw: rpcrdma-bench sweep on $SDEV"
timeout 90 $B sweep --provider verbs --device $SDEV --thresholds 1k,4k --sizes 256,8k --depth 4 \
	--duration 400ms --warmup 100ms --verify -q --out $R/siw-sweep.json 2>/tmp/siw-sweep.err
src=$?
cat /tmp/siw-sweep.err
check_results $R/siw-sweep.json short long
chk=$?
echo "sweep rc=$src check rc=$chk"
[ $src -eq 0 ] && [ $chk -eq 0 ]
result siw-sweep $?
keep $R/siw-sweep.json

# 3. server and client in two processes.
ts "=== siw: rpcrdma-bench server + client as two processes on $SDEV"
server_client siw-server-client $SDEV $SIP 20070 1s 200ms $R/siw-client.json

# 4. knfsd over siw0: the interop test's NFSv3 NULL call, then the tool's NFSv3 calls.
ts "=== siw: knfsd interop test on $SDEV"
KNFSD_ADDR=$SIP:20049 KNFSD_DEVICE=$SDEV timeout 60 $T/knfsd.test -test.v -test.count=1 -test.run 'NullCall$'
result siw-knfsd-interop $?
ts "=== siw: rpcrdma-bench client --program nfs3 (nfs-mix) against knfsd on $SDEV"
timeout 60 $B client --provider verbs --device $SDEV --addr $SIP:20049 --program nfs3 --nfs-export $SIP:/export \
	--nfs-mountd 20048 --mix nfs-mix --depth 4 --count 500 --warmup 100ms --verify -q --out $R/siw-knfsd-mix.json
crc=$?
check_results $R/siw-knfsd-mix.json short chunked
chk=$?
echo "client rc=$crc check rc=$chk"
[ $crc -eq 0 ] && [ $chk -eq 0 ]
result siw-knfsd-mix $?
keep $R/siw-knfsd-mix.json
