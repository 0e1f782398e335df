package fanin

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

// The messages between the ranks and the coordinator (rank 0), one JSON object each behind
// a 4-byte big-endian length, over one TCP connection per rank that stays open for the whole
// run: its loss, or its silence past the heartbeat's bound, is how either side learns that
// the other died or hangs.
const (
	msgHello   = "hello"   // rank → coordinator: rank, host, role and the job's secret
	msgVote    = "vote"    // client → coordinator: ready for point Point, of length Len with Drain in it (Err: could not)
	msgVerdict = "verdict" // coordinator → client: start point Point at T1, Len after it at most (Err: do not, why)
	msgResult  = "result"  // client → coordinator: the rank's results, last message
	msgStop    = "stop"    // coordinator → rank: stop measuring (Err: why; Hurry: skip the drain); servers: stop serving
	msgClock   = "clock"   // rank → coordinator: T0, the rank's clock; back: T0 and T1, rank 0's
	msgBeat    = "beat"    // either way, every Heartbeat: this side is alive
)

// maxMsg bounds one message of a rank that said hello: its results with every point's
// histograms. maxHello bounds the first message of a connection, read before anything is
// known of its sender: a hello is a few hundred bytes.
const (
	maxMsg   = 256 << 20
	maxHello = 4 << 10
)

// sendWait bounds one message's write: a peer that stopped reading (a stopped process) must
// not hold the sender.
const sendWait = 30 * time.Second

type msg struct {
	Kind   string      `json:"kind"`
	Rank   int         `json:"rank"`
	Host   string      `json:"host,omitempty"`
	Role   string      `json:"role,omitempty"`
	Secret string      `json:"secret,omitempty"`
	Point  int         `json:"point,omitempty"`
	Len    int64       `json:"len,omitempty"`
	Drain  int64       `json:"drain,omitempty"`
	Hurry  bool        `json:"hurry,omitempty"`
	Err    string      `json:"err,omitempty"`
	Result *rankResult `json:"result,omitempty"`
	T0     int64       `json:"t0,omitempty"`
	T1     int64       `json:"t1,omitempty"`
}

// rankResult is everything a rank reports at its end.
type rankResult struct {
	Device string `json:"device"`
	CPUs   []int  `json:"cpus"`
	Server string `json:"server"`
	// Clocks are rank 0's wall clock minus this rank's and its error bound, estimated
	// before each point (the first estimate, before any point, when the rank ran none).
	Clocks []clock `json:"clocks"`
	// Starts are the rank's wall clock just after each point's start verdict.
	Starts []time.Time `json:"starts"`
	// Run is the rank's session, nil if it never started.
	Run *results.Run `json:"run"`
	// CPU is a server rank's process CPU time over WallNs, from listening to stopping.
	CPU    *results.CPU `json:"cpu,omitempty"`
	WallNs int64        `json:"wall_ns,omitempty"`
	// Err is why the rank failed, "" if it did not.
	Err string `json:"err,omitempty"`
}

// clock is an estimate of rank 0's wall clock minus a rank's, Offset, within Error (ns).
type clock struct {
	Offset int64 `json:"offset_ns"`
	Error  int64 `json:"error_ns"`
}

// conn frames msgs over a net.Conn; writes are serialised, reads belong to one goroutine.
type conn struct {
	c  net.Conn
	r  *bufio.Reader
	mu sync.Mutex
}

func newConn(c net.Conn) *conn { return &conn{c: c, r: bufio.NewReaderSize(c, 4096)} }

func (c *conn) send(m msg) error {
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode %s: %w", m.Kind, err)
	}
	frame := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(b)), uint32(len(b)))
	c.mu.Lock()
	defer c.mu.Unlock()
	c.c.SetWriteDeadline(time.Now().Add(sendWait))
	if _, err := c.c.Write(append(frame, b...)); err != nil {
		return fmt.Errorf("send %s: %w", m.Kind, err)
	}
	return nil
}

// recv reads one message of at most limit bytes; a longer one is refused before anything
// is allocated for it.
func (c *conn) recv(limit uint32) (msg, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(c.r, hdr[:]); err != nil {
		return msg{}, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > limit {
		return msg{}, fmt.Errorf("message of %d bytes, at most %d", n, limit)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(c.r, b); err != nil {
		return msg{}, fmt.Errorf("truncated message: %w", err)
	}
	var m msg
	if err := json.Unmarshal(b, &m); err != nil {
		return msg{}, fmt.Errorf("decode message: %w", err)
	}
	return m, nil
}
