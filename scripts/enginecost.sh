#!/bin/sh
# The protocol engine's own instructions per NULL round trip (both sides), counted by
# callgrind, at two commits side by side: instruction counts do not move with other work on
# the machine, where BenchmarkEngine's nanoseconds do. Each commit's rpcrdma test binary runs
# BenchmarkNullRPC/preregistered (soft, in process) for N round trips; every function's own
# instructions are summed by package: rpcrdma and rpcrdma/wire (the engine), oncrpc (the
# program's codec), datapath/soft (the emulated device), the rest (Go runtime, the loop).
#
# usage: scripts/enginecost.sh [BASE [HEAD]]   (default: HEAD~1 and the work tree)
# Environment: N (default 20000). Needs valgrind (Debian valgrind).
set -eu
cd "$(dirname "$0")/.."
N=${N:-20000}
OUT=build/enginecost
mkdir -p "$OUT"
command -v valgrind >/dev/null || { echo "enginecost: needs valgrind (apt-get install valgrind)" >&2; exit 2; }

build() { # build REV NAME: the rpcrdma test binary of REV ("" the work tree)
	if [ -z "$1" ]; then
		CGO_ENABLED=0 go test -c -o "$OUT/$2.test" ./rpcrdma
		return
	fi
	wt=$(mktemp -d)
	git worktree add -q --detach "$wt" "$1"
	(cd "$wt" && CGO_ENABLED=0 go test -c -o "$OLDPWD/$OUT/$2.test" ./rpcrdma)
	git worktree remove --force "$wt"
}

count() { # count NAME: instructions per round trip by package
	# Go's asynchronous preemption signals confuse callgrind; the loop does not need them.
	GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file="$OUT/$1.cg" \
		"$OUT/$1.test" -test.run '^$' -test.bench 'BenchmarkNullRPC$/preregistered' \
		-test.benchtime "${N}x" -test.count 1 >/dev/null 2>&1
	callgrind_annotate --auto=no --threshold=100 "$OUT/$1.cg" 2>/dev/null | awk -v n="$N" -v name="$1" '
		/^ *[0-9,]+ \(.*\) +[^ ]+:[^ ]+/ {
			c = $1; gsub(",", "", c)
			f = $0; sub(/^[^:]*:/, "", f); sub(/ .*/, "", f)
			sub(/^github.com\/rpcrdma-bench\/rpcrdma-bench\//, "", f)
			if (f ~ /^rpcrdma(\/wire)?\./) k = "engine"
			else if (f ~ /^oncrpc/) k = "codec"
			else if (f ~ /^datapath\/soft/) k = "soft"
			else k = "other"
			t[k] += c
		}
		END { printf "%-8s engine %6.0f  codec %4.0f  engine+codec %6.0f  soft %6.0f  other %6.0f\n", name,
			t["engine"]/n, t["codec"]/n, (t["engine"]+t["codec"])/n, t["soft"]/n, t["other"]/n }'
}

build "${1:-HEAD~1}" base
build "${2:-}" head
count base
count head
