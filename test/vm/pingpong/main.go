//go:build verbs && cgo && pingpong

// Command pingpong measures the round trip of a SEND/RECV ping-pong over the verbs provider,
// the project's counterpart of perftest's ib_send_lat, for the side-by-side table of make
// vmtest. Client and server run in this process on one device (the device talking to itself
// at its own address, as ib_send_lat -R does in the VM), each on its own locked OS thread,
// busy-polling its own CQ.
//
//	pingpong -sizes 64,1024,4096 -iters 1000
//
// prints one line per size:
//
//	PINGPONG size=64 iters=1000 events=0 inline=1 defer=1 refill=1 rtt_min_us=.. rtt_p50_us=.. rtt_mean_us=.. rtt_p99_us=..
//
// With -events both sides sleep in CQ.Wait (the completion channel) instead of busy polling.
// By default each side's posts wait for its next poll, which posts them in the same C call
// (datapath.Deferrer, as the tool's connections do); -defer=false makes every post a C call of
// its own, and -refill N posts receives N at a time. -turnarounds adds each side's mean
// turnaround (verbs.Config.Turnarounds: from a poll's completion to the post it caused) and
// the mean time its posts took in C, per round trip. -loop c runs each side's loop in C
// (verbs.RunPingPong: the same queue pairs, CQs, calls and deferred posting, with no Go
// between a completion and the posts it causes), the floor the Go loop is compared with.
// -chunk read or write makes each size a chunk that the server moves between the call and
// the reply, by an RDMA Read of the client's memory that the reply waits for (an RPC with a
// Read chunk, SINK) or by an RDMA Write into it posted with the reply (a Write chunk,
// SOURCE); the SENDs are then 64 bytes.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/datapath/verbs"
	"golang.org/x/sys/unix"
)

const (
	slots   = 16
	slotLen = 64 << 10
)

func main() {
	sizes := flag.String("sizes", "64,1024,4096", "message sizes in bytes, comma separated")
	iters := flag.Int("iters", 1000, "measured round trips per size")
	warmup := flag.Int("warmup", 100, "unmeasured round trips before each size")
	dev := flag.String("dev", "", "device (default: the first)")
	spin := flag.Int("spin", 64, "verbs.Config.PollSpin")
	inline := flag.Int("inline", 256, "QPConfig.MaxInlineData (clamped by the device)")
	events := flag.Bool("events", false, "sleep in CQ.Wait (completion channel) instead of busy polling")
	refill := flag.Int("refill", 1, "post receives in batches of this many (1: one per round trip, as ib_send_lat)")
	deferPosts := flag.Bool("defer", true, "stage posts for the next poll to post in the same C call (datapath.Deferrer), as the tool does; false: a C call per post")
	turnarounds := flag.Bool("turnarounds", false, "measure each side's turnaround (verbs.Config.Turnarounds; needs -defer)")
	loop := flag.String("loop", "go", "who reacts to completions: go (this program's loop over the datapath) or c (verbs.RunPingPong)")
	chunkName := flag.String("chunk", "", "read or write: each size is a chunk the server moves by RDMA Read (as SINK) or Write (as SOURCE) between the call and the reply")
	flag.Parse()
	var ns []int
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 || n > slotLen {
			fatal(fmt.Errorf("bad size %q", s))
		}
		ns = append(ns, n)
	}
	if *refill < 1 || *refill > slots/2 {
		fatal(fmt.Errorf("-refill %d: want 1 to %d", *refill, slots/2))
	}
	if *turnarounds && !*deferPosts {
		fatal(fmt.Errorf("-turnarounds needs -defer"))
	}
	var chunk datapath.Opcode
	switch *chunkName {
	case "":
	case "read":
		chunk = datapath.OpRead
	case "write":
		chunk = datapath.OpWrite
	default:
		fatal(fmt.Errorf("-chunk %q: want read or write", *chunkName))
	}
	inC := false
	switch *loop {
	case "go":
	case "c":
		if !*deferPosts || *events || *refill != 1 {
			fatal(fmt.Errorf("-loop c needs -defer, busy polling and -refill 1"))
		}
		inC = true
	default:
		fatal(fmt.Errorf("-loop %q: want go or c", *loop))
	}
	if !*events {
		// Two busy pollers and an idle P beside them, as the tool sizes the runtime.
		busy := datapath.Poll{Mode: datapath.PollBusy}
		datapath.EnsureProcs([]datapath.Poll{busy, busy})
	}
	vcfg := verbs.Config{PollSpin: *spin, Turnarounds: *turnarounds}
	if err := run(*dev, vcfg, ns, *iters, *warmup, *inline, *refill, *events, *deferPosts, inC, chunk); err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "pingpong:", err)
	os.Exit(1)
}

type side struct {
	events bool                   // wait on the completion channel when the CQ is empty
	idler  datapath.Idler         // busy: passes through the Go scheduler as the tool's pollers do
	refill int                    // receives posted per PostRecv
	wrs    [slots]datapath.RecvWR // the receive of each slot, built once
	due    []datapath.RecvWR
	conn   datapath.Conn
	cq     datapath.CQ
	mr     datapath.MR
	base   uint64 // send buffer at base, receive slots after it, then the chunk
	// The server's chunk (-chunk): the operation, its length, and the client's chunk.
	chunk     datapath.Opcode
	chunkLen  int
	peerChunk uint64
}

// chunkSend is the size of the call and the reply when a chunk carries the data.
const chunkSend = 64

// chunkAt is where a side's chunk lies: after its receive slots.
func (s *side) chunkAt() uint64 { return s.base + (slots+1)*slotLen }

func run(devName string, vcfg verbs.Config, sizes []int, iters, warmup, inline, refill int, events, deferPosts, inC bool, chunk datapath.Opcode) error {
	d, err := verbs.New(vcfg).Open(devName)
	if err != nil {
		return err
	}
	defer d.Close()
	mem, err := unix.Mmap(-1, 0, 2*(slots+2)*slotLen, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return err
	}
	defer unix.Munmap(mem)
	mr, err := d.Register(mem, datapath.AccessLocalWrite|datapath.AccessRemoteRead|datapath.AccessRemoteWrite)
	if err != nil {
		return err
	}
	defer mr.Close()
	var cli, srv side
	for i, s := range []*side{&cli, &srv} {
		if s.cq, err = d.NewCQ(4 * slots); err != nil {
			return err
		}
		defer s.cq.Close()
		s.mr = mr
		s.events = events
		s.idler = datapath.NewIdler(datapath.Poll{Mode: datapath.PollBusy}, nil)
		s.refill = refill
		s.base = mr.Addr() + uint64(i*(slots+2)*slotLen)
	}
	l, err := d.Listen(":0")
	if err != nil {
		return err
	}
	defer l.Close()
	qc := func(cq datapath.CQ) datapath.QPConfig {
		return datapath.QPConfig{SendCQ: cq, RecvCQ: cq, MaxSendWR: 2 * slots, MaxRecvWR: slots, MaxSendSGE: 1, MaxRecvSGE: 1, MaxInlineData: inline}
	}
	accepted := make(chan error, 1)
	go func() {
		r, err := l.Accept(context.Background())
		if err == nil {
			srv.conn, err = r.Accept(qc(srv.cq), nil)
		}
		accepted <- err
	}()
	if cli.conn, err = d.Connect(context.Background(), l.Addr(), qc(cli.cq), nil); err != nil {
		return err
	}
	defer cli.conn.Close()
	if err := <-accepted; err != nil {
		return err
	}
	defer srv.conn.Close()
	for _, s := range []*side{&cli, &srv} {
		for i := 0; i < slots; i++ {
			if err := s.postRecv(uint64(i)); err != nil {
				return err
			}
		}
	}
	if deferPosts {
		// After the first receives: from here each side's thread both posts and polls.
		for _, s := range []*side{&cli, &srv} {
			d, ok := s.conn.(datapath.Deferrer)
			if !ok {
				return fmt.Errorf("-defer: this provider's connections cannot defer posts")
			}
			if err := d.DeferPosts(); err != nil {
				return err
			}
		}
	}
	mode := "busy polling"
	if events {
		mode = "events (CQ.Wait)"
	}
	loop := "go"
	if inC {
		loop = "c"
	}
	fmt.Printf("# device %s, inline limit %d, poll spin %d, %s, posts deferred %v, receives posted %d at a time, loop in %s\n",
		d.Info().Name, cli.conn.Caps().MaxInlineData, vcfg.PollSpin, mode, deferPosts, refill, loop)
	for _, size := range sizes {
		msg := size
		if chunk != 0 {
			msg = chunkSend
			srv.chunk, srv.chunkLen, srv.peerChunk = chunk, size, cli.chunkAt()
		}
		rtts := make([]time.Duration, iters)
		cta0, _ := datapath.Turnarounds(cli.cq)
		sta0, _ := datapath.Turnarounds(srv.cq)
		done := make(chan error, 1)
		if inC {
			go func() {
				done <- srv.runC(msg, warmup, iters, nil)
			}()
			if err := cli.runC(msg, warmup, iters, rtts); err != nil {
				return fmt.Errorf("client: %w", err)
			}
			if err := <-done; err != nil {
				return fmt.Errorf("server: %w", err)
			}
		} else {
			go func() {
				err := srv.serve(msg, warmup+iters)
				if err != nil {
					// The client would wait for ever for the reply that will not come.
					fatal(fmt.Errorf("server: %w", err))
				}
				done <- nil
			}()
			if err := cli.ping(msg, warmup, rtts); err != nil {
				return fmt.Errorf("client: %w", err)
			}
			<-done
		}
		slices.Sort(rtts)
		var sum time.Duration
		for _, r := range rtts {
			sum += r
		}
		us := func(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e3, 'f', 2, 64) }
		fmt.Printf("PINGPONG size=%d iters=%d loop=%s events=%d inline=%d defer=%d refill=%d rtt_min_us=%s rtt_p50_us=%s rtt_mean_us=%s rtt_p99_us=%s",
			size, iters, loop, btoi(events), btoi(msg <= cli.conn.Caps().MaxInlineData), btoi(deferPosts), refill, us(rtts[0]), us(rtts[len(rtts)/2]),
			us(sum/time.Duration(len(rtts))), us(rtts[len(rtts)*99/100]))
		if chunk != 0 {
			fmt.Printf(" chunk=%v", chunk)
		}
		if cta1, ok := datapath.Turnarounds(cli.cq); ok {
			// Warm-up included: each side turns around once per round trip.
			sta1, _ := datapath.Turnarounds(srv.cq)
			for _, e := range []struct {
				name string
				t    datapath.Turnaround
			}{{"cli", cta1.Sub(cta0)}, {"srv", sta1.Sub(sta0)}} {
				fmt.Printf(" %s_turn_mean_us=%s %s_turn_p50_us=%s %s_turn_min_us=%s %s_post_mean_us=%s", e.name, us(e.t.Mean()),
					e.name, us(e.t.Quantile(0.5)), e.name, us(e.t.Min), e.name, us(e.t.Post/time.Duration(max(e.t.Count, 1))))
			}
		}
		fmt.Println()
	}
	return nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (s *side) postRecv(slot uint64) error {
	if s.due == nil {
		s.due = make([]datapath.RecvWR, 0, slots)
		for i := range s.wrs {
			s.wrs[i] = datapath.RecvWR{ID: uint64(i), SGL: []datapath.SGE{{Addr: s.base + uint64(i+1)*slotLen, Length: slotLen, LKey: s.mr.LKey()}}}
		}
	}
	s.due = append(s.due, s.wrs[slot])
	if len(s.due) < s.refill {
		return nil
	}
	_, err := s.conn.PostRecv(s.due)
	s.due = s.due[:0]
	return err
}

func (s *side) send(wr []datapath.SendWR) error {
	_, err := s.conn.PostSend(wr)
	return err
}

// await polls until a completion of opcode want: a receive, whose slot it posts again, or
// the chunk's Read.
func (s *side) await(wcs []datapath.Completion, want datapath.Opcode) error {
	for {
		n, err := s.cq.Poll(wcs)
		if err != nil {
			return err
		}
		for _, wc := range wcs[:n] {
			if wc.Status != datapath.StatusSuccess {
				return fmt.Errorf("%v completion: %v (%v)", wc.Op, wc.Status, s.conn.Err())
			}
			switch {
			case wc.Op == want && want == datapath.OpRecv:
				return s.postRecv(wc.ID)
			case wc.Op == want:
				return nil
			case wc.Op == datapath.OpRecv:
				return fmt.Errorf("a receive while the chunk's %v was awaited", want)
			}
		}
		if n == 0 {
			if s.events {
				if err := s.cq.Wait(10 * time.Second); err != nil {
					return err
				}
			} else {
				s.idler.ShouldWait()
			}
		}
	}
}

// signalEvery is how often a SEND asks for a completion: often enough to free the send queue,
// rarely enough that send completions cost little next to the round trip.
const signalEvery = 8

// sendWRs returns the SEND to post for each round trip i: wrs[i%signalEvery].
func (s *side) sendWRs(size int) [][]datapath.SendWR {
	var flags datapath.SendFlags
	if size <= s.conn.Caps().MaxInlineData {
		flags |= datapath.FlagInline
	}
	wrs := make([][]datapath.SendWR, signalEvery)
	for i := range wrs {
		f := flags
		if i == signalEvery-1 {
			f |= datapath.FlagSignaled
		}
		wrs[i] = []datapath.SendWR{{ID: 1 << 20, Op: datapath.OpSend, Flags: f, SGL: []datapath.SGE{{Addr: s.base, Length: uint32(size), LKey: s.mr.LKey()}}}}
	}
	return wrs
}

// runC runs this side's loop in C (verbs.RunPingPong) with the buffers, signalling and
// receive slots of the Go loop.
func (s *side) runC(size, warmup, iters int, rtts []time.Duration) error {
	p := verbs.PingPong{
		Client:      rtts != nil,
		Warmup:      warmup,
		Iters:       iters,
		Send:        datapath.SGE{Addr: s.base, Length: uint32(size), LKey: s.mr.LKey()},
		Inline:      size <= s.conn.Caps().MaxInlineData,
		SignalEvery: signalEvery,
		RecvBase:    s.base + slotLen,
		RecvStride:  slotLen,
		RecvLen:     slotLen,
	}
	if s.chunk != 0 {
		p.Chunk, p.Local, p.RemoteAddr, p.RKey = s.chunk, s.chunkSGE(), s.peerChunk, s.mr.RKey()
	}
	return verbs.RunPingPong(s.conn, s.cq, p, rtts)
}

func (s *side) chunkSGE() datapath.SGE {
	return datapath.SGE{Addr: s.chunkAt(), Length: uint32(s.chunkLen), LKey: s.mr.LKey()}
}

// serve answers n pings, moving the chunk between each and its answer.
func (s *side) serve(size, n int) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	wrs := s.sendWRs(size)
	wcs := make([]datapath.Completion, 16)
	var move []datapath.SendWR
	if s.chunk != 0 {
		// A Read is signaled, since the answer waits for it; a Write is not, since the
		// answer's SEND follows it in order.
		var f datapath.SendFlags
		if s.chunk == datapath.OpRead {
			f = datapath.FlagSignaled
		}
		move = []datapath.SendWR{{ID: 2 << 20, Op: s.chunk, Flags: f, SGL: []datapath.SGE{s.chunkSGE()}, RemoteAddr: s.peerChunk, RKey: s.mr.RKey()}}
	}
	for i := 0; i < n; i++ {
		if err := s.await(wcs, datapath.OpRecv); err != nil {
			return err
		}
		if move != nil {
			if err := s.send(move); err != nil {
				return err
			}
			if s.chunk == datapath.OpRead {
				if err := s.await(wcs, datapath.OpRead); err != nil {
					return err
				}
			}
		}
		if err := s.send(wrs[i%signalEvery]); err != nil {
			return err
		}
	}
	// With deferred posts the last reply is only staged: the next poll posts it. (Whatever
	// completion it finds is a send's; the client sends nothing more.)
	_, err := s.cq.Poll(wcs)
	return err
}

// ping runs warmup unmeasured and len(rtts) measured round trips.
func (s *side) ping(size, warmup int, rtts []time.Duration) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	wrs := s.sendWRs(size)
	wcs := make([]datapath.Completion, 16)
	// One clock read per round trip, as ib_send_lat's loop reads the cycle counter once per
	// iteration: the reading that ends a round trip starts the next (time.Now would read the
	// wall clock as well, time.Since(epoch) reads only the monotonic one).
	epoch := time.Now()
	t0 := time.Since(epoch)
	for i := -warmup; i < len(rtts); i++ {
		if err := s.send(wrs[(i+warmup)%signalEvery]); err != nil {
			return err
		}
		if err := s.await(wcs, datapath.OpRecv); err != nil {
			return err
		}
		t1 := time.Since(epoch)
		if i >= 0 {
			rtts[i] = t1 - t0
		}
		t0 = t1
	}
	return nil
}
