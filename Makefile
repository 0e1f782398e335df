# rpcrdma-bench. `make test` is what CI runs (.ci/run); see README.md.
GO        ?= go
FUZZTIME  ?= 10s
STATICCHECK_VERSION ?= v0.8.2

.PHONY: all build test unit hlogtest bench fuzz lint

all: build

build:
	CGO_ENABLED=0 $(GO) build ./...

# The whole suite: unit tests (no cgo, no RDMA hardware), our HdrHistogram logs through the
# format's reference processor, the fan-in under mpirun and under srun, then the soft-RoCE VM
# suite (test/vm: real verbs on rxe0 under QEMU). Each installs its Debian packages as root.
test: unit hlogtest mpitest slurmtest vmtest

unit:
	CGO_ENABLED=0 $(GO) vet ./...
	CGO_ENABLED=0 $(GO) test -count=1 ./...

# HdrHistogram's reference HistogramLogProcessor (Java, Debian libhdrhistogram-java) reads
# our .hlog output and agrees with our percentiles; as root it installs the package.
hlogtest:
	GO=$(GO) ./scripts/hlogtest.sh

# The fan-in under mpirun over soft on this host (scripts/mpitest.sh, about 75 s on a busy
# 2-core host): 1 server + 3 client ranks, 4 ranks in pairs, a sweep, a client rank killed
# mid-run, then the fault steps: stray connections, a client and a server rank stopped
# (SIGSTOP), rank 0 killed. As root it installs Open MPI (Debian openmpi-bin,
# libopenmpi-dev) and jq.
.PHONY: mpitest slurmtest
mpitest:
	GO=$(GO) ./scripts/mpitest.sh

# The same under Slurm's srun, on a one-node Slurm the script starts as root (munge,
# slurmctld, slurmd; Debian slurm-wlm) and stops (scripts/slurmtest.sh, about 60-80 s).
slurmtest:
	GO=$(GO) ./scripts/slurmtest.sh

bench:
	CGO_ENABLED=0 $(GO) test -run '^$$' -bench . -benchmem ./...

# Go's net/rpc over loopback TCP next to rpcrdma-bench server/client over soft, alternating.
.PHONY: baseline
baseline:
	./scripts/baseline.sh

# Runs every native fuzz target for FUZZTIME each.
fuzz:
	FUZZTIME=$(FUZZTIME) ./scripts/fuzz.sh

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "not gofmt'd: $$out"; exit 1; fi
	CGO_ENABLED=0 $(GO) vet ./...
	CGO_ENABLED=0 $(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...
	$(GO) mod tidy -diff

# The soft-RoCE VM suite (test/vm): boots Debian's kernel under QEMU (TCG) with rxe0 and runs
# the verbs provider's tests and the datapath conformance suite, the class matrix, the
# knfsd-over-RDMA interop and NFS steps and the tool on rxe0 and siw0: functional steps only
# (`make vmbench` measures). As root it installs what it needs.
.PHONY: vmtest vmbench
vmtest:
	./test/vm/vmtest.sh

# The VM's measurements, not part of `make test`: the benchmarks on the guest's CPU and the
# latency table (perftest beside the tool and the ping-pong, interleaved rounds).
vmbench:
	VMTEST_STEPS=bench,latency,nfscompare ./test/vm/vmtest.sh
