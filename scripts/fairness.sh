#!/bin/sh
# fairness.sh: does one connection keep its share of a server poller's sink pool beside a
# misbehaving peer? Builds rpcrdma-bench and the rpcrdma test binary (whose peer mode plays
# the misbehaving peers), then runs test/fairness against a real `server` with a small pool:
# a well-behaved client's SINK rate and p50 alone and beside a peer that answers RDMA Reads
# 200 ms late, and beside one that withholds RDMA_DONE, alternated, 3 runs each (see
# test/fairness/main.go). Extra arguments go to test/fairness (e.g. -runs 5 -sink-buffers 8).
set -eu
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
CGO_ENABLED=0 go build -o "$tmp/rpcrdma-bench" ./cmd/rpcrdma-bench
CGO_ENABLED=0 go test -c -o "$tmp/rpcrdma.test" ./rpcrdma
CGO_ENABLED=0 go run ./test/fairness -server "$tmp/rpcrdma-bench" -peer "$tmp/rpcrdma.test" "$@"
