package fanin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/session"
)

// Server is a server rank's responder: listening once Config.Serve returns it.
type Server interface {
	// Addr is the address listened on.
	Addr() string
	// Serve serves until ctx is done.
	Serve(ctx context.Context) error
	Close() error
}

// Config is one fan-in run, the same at every rank.
type Config struct {
	// Comm is the job's communicator.
	Comm Comm
	// ServerRanks serve (nil: rank 0) unless Pairs, which makes rank 2k the server of rank
	// 2k+1.
	ServerRanks []int
	Pairs       bool
	// Serve starts a server rank's responder, listening.
	Serve func() (Server, error)
	// Measure runs a client rank's session against the server at addr, its Connector
	// wrapped by wrap (which starts each point together with the other ranks), with ctx
	// cancelled when the run stops; it returns the rank's results (nil if the session could
	// not start) and why the rank failed (nil if it did not).
	Measure func(ctx context.Context, addr string, wrap func(session.Connector) session.Connector) (*results.Run, error)
	// External, when set, is the address of a server outside the job (an NFS server, say)
	// that every rank measures; no rank serves then, and ServerRanks and Pairs must be unset.
	External string
	// RunConfig is the results file's "config" object.
	RunConfig any
	// Out is rank 0's results file, kept current as results arrive; "" writes none.
	Out string
	// Log takes the orchestration's own lines (nil: discarded).
	Log io.Writer
	// Grace is how long rank 0 waits for the ranks' results once it is stopped (0: 5 s);
	// Setup how long for every rank to reach it (0: 60 s).
	Grace, Setup time.Duration
}

// wireup is what rank 0 broadcasts once every server rank listens.
type wireup struct {
	Coordinator string         `json:"coordinator"`
	Servers     map[int]string `json:"servers"`
	Failed      map[int]string `json:"failed"`
}

// listened is what a rank contributes to the wire-up.
type listened struct {
	Addr string `json:"addr,omitempty"`
	Err  string `json:"err,omitempty"`
}

// barriers is how many barriers the wire-up times.
const barriers = 9

// Run runs this rank's part of the fan-in. Rank 0 returns the merged results (also written
// to Out); the others return nil. Its error is the run's failure: at rank 0 the failures of
// every rank, each with its rank, host and cause; elsewhere this rank's own.
func Run(ctx context.Context, c Config) (*results.Run, error) {
	if c.Log == nil {
		c.Log = io.Discard
	}
	if c.Grace == 0 {
		c.Grace = 5 * time.Second
	}
	if c.Setup == 0 {
		c.Setup = 60 * time.Second
	}
	rank, host := c.Comm.Rank(), c.Comm.Host()
	layout, err := NewLayout(c.Comm.Size(), c.ServerRanks, c.Pairs)
	if c.External != "" {
		if len(c.ServerRanks) > 0 || c.Pairs {
			return nil, fmt.Errorf("a fan-in against a server outside the job (%s) has no server ranks: it takes no --server-ranks or --pairs", c.External)
		}
		layout, err = ExternalLayout(c.Comm.Size()), nil
	}
	if err != nil {
		return nil, err
	}
	var co *coordinator
	if rank == 0 {
		if co, err = listenCoordinator(layout); err != nil {
			// Every rank waits in the wire-up's collectives: none can go on.
			c.Comm.Abort(1)
			return nil, err
		}
	}
	var srv Server
	var mine listened
	if layout.Role(rank) == RoleServer {
		if srv, err = c.Serve(); err != nil {
			mine.Err = fmt.Sprintf("listen: %v", err)
		} else {
			mine.Addr = advertise(srv.Addr(), host)
		}
	}
	w, err := wire(c.Comm, co, mine)
	if err != nil {
		return nil, err
	}
	barrier, err := timeBarriers(c.Comm)
	if err != nil {
		return nil, err
	}
	if rank == 0 {
		fmt.Fprintf(c.Log, "rpcrdma-bench fanin: %d ranks (%d serving), a barrier takes %v\n", layout.Size(), len(layout.Servers()), time.Duration(barrier))
	}

	done := make(chan *collected, 1)
	if co != nil {
		keep := func(col *collected) {
			if c.Out == "" {
				return
			}
			if r, err := c.merged(layout, col, w.Servers, barrier, false); err == nil {
				if err := results.WriteFile(c.Out, r); err != nil {
					fmt.Fprintf(c.Log, "rpcrdma-bench fanin: %v\n", err)
				}
			}
		}
		co.changed = keep
		go func() { done <- co.run(ctx, c.Grace, c.Setup) }()
	}

	// A client rank measures until ctx is done or rank 0 stops it; a server rank serves until
	// rank 0 says the clients are done (or is lost), and at most Grace past ctx: clients
	// stopped with it still drain their RPCs through it.
	var rctx context.Context
	var stop context.CancelFunc
	if layout.Role(rank) == RoleServer {
		rctx, stop = context.WithCancel(context.Background())
		go func() {
			select {
			case <-ctx.Done():
				time.AfterFunc(c.Grace, stop)
			case <-rctx.Done():
			}
		}()
	} else {
		rctx, stop = context.WithCancel(ctx)
	}
	defer stop()
	var why atomic.Pointer[string]
	l, err := dialCoordinator(w.Coordinator, rank, host, layout.Role(rank), func(s string) {
		why.Store(&s)
		stop()
	})
	if err != nil {
		// Rank 0 would wait for this rank until Setup ends: end the job now, saying why.
		err = fmt.Errorf("rank %d (host %s): %w", rank, host, err)
		fmt.Fprintf(c.Log, "rpcrdma-bench fanin: %v: aborting the job\n", err)
		c.Comm.Abort(1)
		return nil, err
	}
	defer l.close()
	var own error
	if layout.Role(rank) == RoleServer {
		own = serve(rctx, srv, mine.Err, l)
	} else {
		own = measure(rctx, c, w, layout.ServerOf(rank), l, &why)
	}
	if co == nil {
		return nil, own
	}
	col := <-done
	r, err := c.merged(layout, col, w.Servers, barrier, true)
	if err != nil {
		return nil, err
	}
	if c.Out != "" {
		if err := results.WriteFile(c.Out, r); err != nil {
			return r, err
		}
	}
	if len(col.failed) > 0 {
		return r, errors.New(col.failures())
	}
	return r, nil
}

// advertise is the address other hosts reach a listener on: an unspecified host (0.0.0.0,
// ::) is replaced by this rank's host name.
func advertise(addr, host string) string {
	h, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(h); h == "" || (ip != nil && ip.IsUnspecified()) {
		return net.JoinHostPort(host, port)
	}
	return addr
}

// wire gathers every server rank's address at rank 0, which broadcasts them with its
// coordinator's.
func wire(comm Comm, co *coordinator, mine listened) (wireup, error) {
	b, err := json.Marshal(mine)
	if err != nil {
		return wireup{}, err
	}
	all, err := comm.Gather(b)
	if err != nil {
		return wireup{}, fmt.Errorf("wire-up: gather: %w", err)
	}
	var w wireup
	if co != nil {
		w = wireup{Coordinator: co.addr(comm.Host()), Servers: map[int]string{}, Failed: map[int]string{}}
		for r, b := range all {
			var l listened
			if err := json.Unmarshal(b, &l); err != nil {
				return wireup{}, fmt.Errorf("wire-up: rank %d: %w", r, err)
			}
			if l.Addr != "" {
				w.Servers[r] = l.Addr
			}
			if l.Err != "" {
				w.Failed[r] = l.Err
			}
		}
		if b, err = json.Marshal(w); err != nil {
			return wireup{}, err
		}
	}
	if b, err = comm.Bcast(b); err != nil {
		return wireup{}, fmt.Errorf("wire-up: broadcast: %w", err)
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return wireup{}, fmt.Errorf("wire-up: %w", err)
	}
	return w, nil
}

// timeBarriers times barriers of every rank and returns the median, in nanoseconds.
func timeBarriers(comm Comm) (int64, error) {
	ts := make([]int64, barriers)
	for i := range ts {
		t0 := time.Now()
		if err := comm.Barrier(); err != nil {
			return 0, fmt.Errorf("barrier: %w", err)
		}
		ts[i] = int64(time.Since(t0))
	}
	slices.Sort(ts)
	return ts[len(ts)/2], nil
}

// serve is a server rank: it serves until the coordinator says the clients are done or is
// lost (l cancels ctx), or ctx is done, and reports what serving cost.
func serve(ctx context.Context, srv Server, cause string, l *link) error {
	if srv == nil {
		// Its listen failure is in the wire-up; the coordinator fails the run with it.
		l.report(&rankResult{Err: cause})
		return errors.New(cause)
	}
	cpu0, err0 := results.ReadCPU()
	t0 := time.Now()
	err := srv.Serve(ctx)
	if cerr := srv.Close(); err == nil {
		err = cerr
	}
	res := &rankResult{WallNs: int64(time.Since(t0))}
	if cpu1, err1 := results.ReadCPU(); err0 == nil && err1 == nil {
		d := cpu1.Sub(cpu0)
		res.CPU = &d
	}
	if err != nil {
		res.Err = fmt.Sprintf("serve: %v", err)
	}
	if rerr := l.report(res); rerr != nil && err == nil {
		err = rerr
	}
	return err
}

// measure is a client rank: it measures against its server, starting each point with the
// others, and reports to the coordinator (which cancels ctx to stop it, saying why).
func measure(ctx context.Context, c Config, w wireup, server int, l *link, why *atomic.Pointer[string]) error {
	var err error
	res := &rankResult{CPUs: cpuSet(), Server: w.Servers[server]}
	if server < 0 {
		res.Server = c.External
	}
	var run *results.Run
	if res.ClockOffsetNs, res.ClockErrorNs, err = l.clockOffset(); err != nil {
		err = fmt.Errorf("clock offset: %w", err)
	} else if res.Server == "" {
		err = fmt.Errorf("its server, rank %d, is not listening: %s", server, w.Failed[server])
	} else {
		g := &gate{l: l, offset: res.ClockOffsetNs}
		run, err = c.Measure(ctx, res.Server, g.connector)
		res.Starts = g.Starts()
	}
	res.Run = run
	if run != nil && run.Environment.Device != nil {
		res.Device = run.Environment.Device.Name
	}
	if why.Load() != nil {
		// Stopped by the coordinator for another rank's failure, which rank 0 reports:
		// this rank did not fail itself.
		err = nil
	}
	if err != nil {
		res.Err = err.Error()
	}
	if rerr := l.report(res); rerr != nil && err == nil {
		err = rerr
	}
	return err
}

// merged builds rank 0's results file from what the coordinator collected, with the server
// ranks' addresses (addrs, from the wire-up): final says the run is over (else it is still
// running).
func (c Config) merged(layout Layout, col *collected, addrs map[int]string, barrier int64, final bool) (*results.Run, error) {
	raw, err := json.Marshal(c.RunConfig)
	if err != nil {
		return nil, fmt.Errorf("encode config: %w", err)
	}
	r := &results.Run{SchemaVersion: results.SchemaVersion, Tool: session.ToolName(), Config: raw,
		Points: []results.Point{}, Environment: results.CaptureEnvironment()}
	var clients []int
	for _, rk := range layout.Clients() {
		if col.results[rk] != nil {
			clients = append(clients, rk)
		}
	}
	var servers []results.ServerRank
	for _, s := range layout.Servers() {
		sr := results.ServerRank{Rank: s, Host: col.hosts[s], Addr: addrs[s]}
		if res := col.results[s]; res != nil {
			sr.CPU, sr.WallNs = res.CPU, res.WallNs
		}
		servers = append(servers, sr)
	}
	var failed []results.RankFailure
	for _, f := range col.failed {
		failed = append(failed, results.RankFailure{Rank: f.rank, Host: f.host, Cause: f.what})
	}
	first := true
	state := results.StateComplete
	var notes []string
	for _, rk := range clients {
		run := col.results[rk].Run
		if run == nil {
			continue
		}
		if first {
			r.Start, r.End, r.Environment, first = run.Start, run.End, run.Environment, false
		}
		r.Start, r.End = minTime(r.Start, run.Start), maxTime(r.End, run.End)
		if st := run.Status; st.State != results.StateComplete {
			if state != results.StateFailed {
				state = st.State
			}
			notes = append(notes, fmt.Sprintf("rank %d (host %s): %s: %s", rk, col.hosts[rk], st.State, st.Message))
		}
	}
	if first {
		r.Start = time.Now().UTC()
		r.End = r.Start
	}
	for k := 0; ; k++ {
		var rps []results.RankPoint
		for _, rk := range clients {
			res := col.results[rk]
			if res.Run == nil || len(res.Run.Points) <= k {
				continue
			}
			rp := results.RankPoint{Rank: rk, Host: col.hosts[rk], Device: res.Device, CPUs: res.CPUs,
				Server: res.Server, ClockOffsetNs: res.ClockOffsetNs, ClockErrorNs: res.ClockErrorNs, Point: res.Run.Points[k]}
			if k < len(res.Starts) {
				rp.StartClock = res.Starts[k]
			}
			rps = append(rps, rp)
		}
		if len(rps) == 0 {
			break
		}
		p, err := mergePoint(rps, results.FanIn{ServerRanks: servers, Failed: failed, BarrierNs: barrier})
		if err != nil {
			return nil, fmt.Errorf("point %d: %w", k+1, err)
		}
		r.Points = append(r.Points, p)
		r.End = maxTime(r.End, p.End)
	}
	switch {
	case len(col.failed) > 0:
		r.Status = results.Status{State: results.StateFailed, Message: col.failures()}
	case !final:
		r.Status = results.Status{State: results.StateInterrupted, Message: "running"}
	case state != results.StateComplete:
		r.Status = results.Status{State: state, Message: strings.Join(notes, "; ")}
	default:
		r.Status = results.Status{State: results.StateComplete}
	}
	return r, nil
}
