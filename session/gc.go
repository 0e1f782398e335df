package session

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

// gcHeadroom is how far the heap may grow over what is live when a point starts before the
// memory limit starts the collector anyway: far more than a point allocates (nothing per
// RPC; connections and their bookkeeping at setup), far less than a machine has.
const gcHeadroom = 256 << 20

// gcPause keeps the garbage collector from running while a point is measured: a collection
// is a pause and a share of the measuring threads' CPUs, which would land in the latencies as
// if the transport had made them. It collects once first, so that the point starts with a
// clean heap, turns the collector off (GOGC=off) and sets a memory limit of the live heap +
// gcHeadroom as the safety net. The GOGC environment variable, when set, wins: the user chose
// a policy. end restores the previous settings and reports the cycles that ran.
type gcPause struct {
	off          bool
	percent      int
	limit, cycle int64
}

func pauseGC() *gcPause {
	g := &gcPause{percent: -1, limit: -1}
	if os.Getenv("GOGC") == "" {
		runtime.GC()
		var live [1]metrics.Sample
		live[0].Name = "/gc/heap/live:bytes"
		metrics.Read(live[:])
		g.off = true
		g.percent = debug.SetGCPercent(-1)
		g.limit = debug.SetMemoryLimit(int64(live[0].Value.Uint64()) + gcHeadroom)
	}
	g.cycle = gcCycles()
	return g
}

func (g *gcPause) end() *results.GCStats {
	st := &results.GCStats{Off: g.off, Cycles: uint32(gcCycles() - g.cycle)}
	if lim := debug.SetMemoryLimit(-1); lim != math.MaxInt64 {
		st.LimitBytes = lim
	}
	if g.off {
		debug.SetMemoryLimit(g.limit)
		debug.SetGCPercent(g.percent)
	}
	return st
}

func gcCycles() int64 {
	var s [1]metrics.Sample
	s[0].Name = "/gc/cycles/total:gc-cycles"
	metrics.Read(s[:])
	return int64(s[0].Value.Uint64())
}
