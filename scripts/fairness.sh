#!/bin/sh
# fairness.sh: does one connection keep its rate beside peers that hold a server poller's
# sink pool? Builds rpcrdma-bench and the rpcrdma test binary (whose peer mode plays the
# misbehaving peers, each in a process of its own), then runs test/fairness against a real
# `server --responder-read` at pools of 2, 8 and the default: a well-behaved client's SINK
# rate and p50 alone and beside one and two peers that answer RDMA Reads 200 ms late, and
# beside one and two that withhold RDMA_DONE, alternated, 3 runs each (see
# test/fairness/main.go). Extra arguments go to test/fairness (e.g. -runs 5 -pools 2,16).
set -eu
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
CGO_ENABLED=0 go build -o "$tmp/rpcrdma-bench" ./cmd/rpcrdma-bench
CGO_ENABLED=0 go test -c -o "$tmp/rpcrdma.test" ./rpcrdma
CGO_ENABLED=0 go run ./test/fairness -server "$tmp/rpcrdma-bench" -peer "$tmp/rpcrdma.test" "$@"
