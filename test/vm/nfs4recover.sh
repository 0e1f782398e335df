# The nfs4recover step (also run at the end of the nfs4 step): the NFSv4.1 session off the
# happy path against knfsd over rxe0, kept short.
#   1. depth 64 with --verify: calls beyond knfsd's session slots wait for one, 0 errors;
#   2. the session lost under a run: knfsd's admin interface expires the client
#      (/proc/fs/nfsd/clients/ID/ctl "expire"), which destroys its sessions and state; the
#      run's calls get NFS4ERR_BADSESSION, the connection makes a new client ID and session
#      (CREATE_SESSION answers NFS4ERR_STALE_CLIENTID) and the run finishes, the recovery
#      counted in the results (points[].recoveries);
#   3. delegation recalls still measured (20; skipped at the end of the nfs4 step, which has
#      measured 100: NFS4_RECALLS_MEASURED set).
# Sourced by guest.sh after knfsd started (uses its T, IP, DEV, B, R, ts, result, keep,
# check_results).

NFS4R="$B client --provider verbs --device $DEV --addr $IP:20049 --program nfs4"

ts "=== nfs4recover: NFSv4.1 at depth 64 against knfsd, verified"
timeout 180 $NFS4R --mix getattr:50,read/4k:25,write/4k:25 --depth 64 --count 4000 --warmup 200ms --verify -q \
	--out $R/nfs4-d64.json
crc=$?
check_results $R/nfs4-d64.json short
chk=$?
echo "client rc=$crc check rc=$chk"
[ $crc -eq 0 ] && [ $chk -eq 0 ]
result nfs4-depth64-verify $?
keep $R/nfs4-d64.json

ts "=== nfs4recover: the session lost under a run (knfsd expires the client), recovered"
timeout 180 $NFS4R --mix getattr --depth 2 --duration 6s --warmup 0 -q --out $R/nfs4-recover.json &
pid=$!
sleep 3
expired=0
for d in /proc/fs/nfsd/clients/*; do
	if grep -q rpcrdma-bench "$d/info" 2>/dev/null; then
		echo "expiring knfsd client $(basename $d): $(grep -E '^(name|minor version)' $d/info | tr '\n' ' ')"
		echo expire >"$d/ctl" && expired=$((expired + 1))
	fi
done
wait $pid
crc=$?
$B report $R/nfs4-recover.json | head -30
rec=$(tr -d '\n ' <$R/nfs4-recover.json | grep -o '"recoveries":{"sessions":[0-9]*,"client_ids":[0-9]*' | head -1)
# The calls in flight when the session went fail (the run then exits 4, its RPCs failed):
# NFS4ERR_BADSESSION, or NFS4ERR_EXPIRED while knfsd expires the client; no other kind.
kinds=$(tr -d '\n ' <$R/nfs4-recover.json | grep -o '"kind":"[a-z0-9_]*","count":[0-9]*' | tr '\n' ' ')
other=$(echo "$kinds" | tr ' ' '\n' | grep -v -E '"kind":"nfs4err_(badsession|deadsession|expired)"' | grep -c kind)
echo "client rc=$crc expired=$expired recoveries: ${rec:-none} errors: ${kinds:-none}"
echo "CLI nfs4-recover: expired $expired client(s), ${rec:-no recoveries}, errors ${kinds:-none}"
{ [ $crc -eq 0 ] || [ $crc -eq 4 ]; } && [ $expired -ge 1 ] && [ -n "$rec" ] && [ "$other" -eq 0 ]
result nfs4-session-recovery $?
keep $R/nfs4-recover.json

[ -n "${NFS4_RECALLS_MEASURED:-}" ] && return 0
ts "=== nfs4recover: delegation recalls against knfsd"
timeout 300 $NFS4R --mix recall --count 20 --warmup 0 -q --out $R/nfs4-recall20.json
crc=$?
n=$(tr -d '\n ' <$R/nfs4-recall20.json | grep -o '"recalls":{"count":[0-9]*' | grep -o '[0-9]*$')
echo "client rc=$crc recalls=${n:-0}"
echo "CLI nfs4-recall20: ${n:-0} recalls"
[ $crc -eq 0 ] && [ "${n:-0}" -ge 20 ]
result nfs4-recall-after-changes $?
keep $R/nfs4-recall20.json
