package fanin

import (
	"context"
	"crypto/rand"
	"encoding/hex"
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
	// cancelled when the run stops and hurry when it must skip its drain too (its server
	// rank is lost); it returns the rank's results (nil if the session could not start) and
	// why the rank failed (nil if it did not).
	Measure func(ctx, hurry context.Context, addr string, wrap func(session.Connector) session.Connector) (*results.Run, error)
	// External, when set, is the address of a server outside the job (an NFS server, say)
	// that every rank measures; no rank serves then, and ServerRanks and Pairs must be unset.
	External string
	// RunConfig is the results file's "config" object.
	RunConfig any
	// Out is rank 0's results file, kept current as results arrive; "" writes none.
	// OwnOut is a client rank's own file, written only if rank 0 is lost before it has the
	// rank's results: the rank's points, merged alone, with the cause; "" writes none.
	Out, OwnOut string
	// Coordinator is the host (name or address) rank 0's coordinator listens on and the
	// other ranks are told: "" picks the loopback address when every rank runs on rank 0's
	// host, else the first address rank 0's host name resolves to that is not a loopback.
	Coordinator string
	// Log takes the orchestration's own lines (nil: discarded).
	Log io.Writer
	// Grace is how long rank 0 waits for the ranks' results once it is stopped (0: 5 s);
	// Setup how long for every rank to reach it (0: 60 s).
	Grace, Setup time.Duration
	// Heartbeat is how often every rank and rank 0 tell each other they are alive (0: 1 s);
	// a side silent for 5 heartbeats is given up. PointGrace is how long a point may run
	// past its warm-up, duration and drain before its deadline (0: 10 s).
	Heartbeat, PointGrace time.Duration
}

// ErrGaveUp is wrapped by rank 0's error when it gave up a rank that is alive but did not
// do its part (stopped, hung, or past a deadline): that rank still holds the launcher's job,
// which the caller ends (Comm.Abort) once the results are out.
var ErrGaveUp = errors.New("rank 0 gave up a rank that is alive but stopped responding")

// wireup is what rank 0 broadcasts once every server rank listens.
type wireup struct {
	Coordinator string `json:"coordinator"`
	// Secret admits a connection to the coordinator: only the job's ranks learn it, from
	// rank 0 through the launcher's broadcast.
	Secret  string         `json:"secret"`
	Hosts   []string       `json:"hosts"`
	Servers map[int]string `json:"servers"`
	Failed  map[int]string `json:"failed"`
}

// listened is what a rank contributes to the wire-up.
type listened struct {
	Host string `json:"host"`
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
	if c.Heartbeat == 0 {
		c.Heartbeat = time.Second
	}
	if c.PointGrace == 0 {
		c.PointGrace = 10 * time.Second
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
	var srv Server
	mine := listened{Host: host}
	if layout.Role(rank) == RoleServer {
		if srv, err = c.Serve(); err != nil {
			mine.Err = fmt.Sprintf("listen: %v", err)
		} else {
			mine.Addr = advertise(srv.Addr(), host)
		}
	}
	var co *coordinator
	w, err := wire(c.Comm, mine, func(hosts []string) (string, string, error) {
		h, err := c.coordinatorHost(hosts)
		if err == nil {
			var secret [32]byte
			rand.Read(secret[:])
			s := hex.EncodeToString(secret[:])
			if co, err = listenCoordinator(layout, h, []byte(s), c.Heartbeat, c.PointGrace, c.Log); err == nil {
				return co.addr(), s, nil
			}
		}
		return "", "", err
	})
	if err != nil {
		return nil, err
	}
	barrier, err := timeBarriers(c.Comm)
	if err != nil {
		return nil, err
	}
	if rank == 0 {
		fmt.Fprintf(c.Log, "rpcrdma-bench fanin: %d ranks (%d serving), a barrier takes %v, coordinator at %s\n", layout.Size(), len(layout.Servers()), time.Duration(barrier), w.Coordinator)
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
	hurry, hasten := context.WithCancel(context.Background())
	defer hasten()
	var why atomic.Pointer[string]
	l, err := dialCoordinator(w.Coordinator, w.Secret, rank, host, layout.Role(rank), c.Heartbeat, func(s string, h bool) {
		why.Store(&s)
		if h {
			hasten()
		}
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
		own = serve(rctx, srv, mine.Err, l, c.Grace)
	} else {
		own = c.measure(rctx, hurry, w, layout, rank, l, &why, barrier)
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
		err = errors.New(col.failures())
		if col.gaveUp {
			err = fmt.Errorf("%w: %w", ErrGaveUp, err)
		}
		return r, err
	}
	return r, nil
}

// coordinatorHost is the host the coordinator listens on, given every rank's host.
func (c Config) coordinatorHost(hosts []string) (string, error) {
	if c.Coordinator != "" {
		return c.Coordinator, nil
	}
	if !slices.ContainsFunc(hosts, func(h string) bool { return h != hosts[0] }) {
		return "127.0.0.1", nil
	}
	ips, err := net.LookupIP(hosts[0])
	if err != nil {
		return "", fmt.Errorf("coordinator: the ranks run on several hosts and rank 0's, %s, does not resolve (give --coordinator): %w", hosts[0], err)
	}
	for _, ip := range ips {
		if !ip.IsLoopback() {
			return ip.String(), nil
		}
	}
	return "", fmt.Errorf("coordinator: the ranks run on several hosts and rank 0's, %s, resolves to loopback addresses only, %v (give --coordinator)", hosts[0], ips)
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

// wire gathers every rank's host and every server rank's address at rank 0, which starts
// its coordinator (listen: its address and the job's secret) and broadcasts them.
func wire(comm Comm, mine listened, listen func(hosts []string) (addr, secret string, err error)) (wireup, error) {
	b, err := json.Marshal(mine)
	if err != nil {
		return wireup{}, err
	}
	all, err := comm.Gather(b)
	if err != nil {
		return wireup{}, fmt.Errorf("wire-up: gather: %w", err)
	}
	var w wireup
	if comm.Rank() == 0 {
		w = wireup{Hosts: make([]string, len(all)), Servers: map[int]string{}, Failed: map[int]string{}}
		for r, b := range all {
			var l listened
			if err := json.Unmarshal(b, &l); err != nil {
				return wireup{}, fmt.Errorf("wire-up: rank %d: %w", r, err)
			}
			w.Hosts[r] = l.Host
			if l.Addr != "" {
				w.Servers[r] = l.Addr
			}
			if l.Err != "" {
				w.Failed[r] = l.Err
			}
		}
		if w.Coordinator, w.Secret, err = listen(w.Hosts); err != nil {
			// Every rank waits in the broadcast: none can go on.
			comm.Abort(1)
			return wireup{}, err
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
func serve(ctx context.Context, srv Server, cause string, l *link, wait time.Duration) error {
	if srv == nil {
		// Its listen failure is in the wire-up; the coordinator fails the run with it.
		l.report(&rankResult{Err: cause}, wait)
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
	if !l.report(res, wait) && err == nil {
		err = errors.New("rank 0 did not take this server rank's report")
	}
	return err
}

// measure is a client rank: it measures against its server, starting each point with the
// others, and reports to the coordinator (which cancels ctx to stop it, saying why). If rank
// 0 is lost before it has the report, the rank writes its own points to OwnOut with the
// cause.
func (c Config) measure(ctx, hurry context.Context, w wireup, layout Layout, rank int, l *link, why *atomic.Pointer[string], barrier int64) error {
	server := layout.ServerOf(rank)
	res := &rankResult{CPUs: cpuSet(), Server: w.Servers[server]}
	if server < 0 {
		res.Server = c.External
	}
	var run *results.Run
	clk, err := l.clockOffset(clockExchanges)
	res.Clocks = []clock{clk}
	if err != nil {
		err = fmt.Errorf("clock offset: %w", err)
	} else if res.Server == "" {
		err = fmt.Errorf("its server, rank %d, is not listening: %s", server, w.Failed[server])
	} else {
		g := &gate{l: l, clk: clk, clkAt: time.Now()}
		run, err = c.Measure(ctx, hurry, res.Server, g.connector)
		if starts, clocks := g.Starts(); len(clocks) > 0 {
			res.Starts, res.Clocks = starts, clocks
		}
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
	if l.report(res, c.Grace) {
		return err
	}
	cause := "it did not acknowledge this rank's results"
	select {
	case <-l.lost:
		cause = l.lostErr.Error()
	default:
	}
	f := failure{rank: 0, host: w.Hosts[0], what: fmt.Sprintf("lost before it had rank %d's results: %s", rank, cause)}
	lost := errors.New(f.String())
	if c.OwnOut != "" {
		col := &collected{hosts: map[int]string{rank: c.Comm.Host()}, results: map[int]*rankResult{rank: res}, failed: []failure{f}}
		r, merr := c.merged(layout, col, w.Servers, barrier, true)
		if merr == nil {
			r.Status.Message = fmt.Sprintf("rank %d's own points only: %s", rank, r.Status.Message)
			merr = results.WriteFile(c.OwnOut, r)
		}
		if merr != nil {
			return errors.Join(lost, fmt.Errorf("write this rank's own points: %w", merr))
		}
		fmt.Fprintf(c.Log, "rpcrdma-bench fanin: rank %d: %v: its own points are in %s\n", rank, lost, c.OwnOut)
	}
	return lost
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
				Server: res.Server, Point: res.Run.Points[k]}
			if k < len(res.Starts) {
				rp.StartClock = res.Starts[k]
			}
			if n := len(res.Clocks); n > 0 {
				clk := res.Clocks[min(k, n-1)]
				rp.ClockOffsetNs, rp.ClockErrorNs = clk.Offset, clk.Error
			}
			rps = append(rps, rp)
		}
		if len(rps) == 0 {
			break
		}
		p, err := mergePoint(rps, results.FanIn{ServerRanks: servers, Failed: failed, BarrierNs: barrier, Refused: col.refused, RefusedCount: col.nrefused})
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
