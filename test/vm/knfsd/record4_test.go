package knfsd

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath/verbs"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/nfs3"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/nfs4"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma"
)

// Bounds of the recording's calls, as package session bounds a Conversation's: a reply
// within recordReply; a call knfsd asks to make again later (NFS4ERR_GRACE while it
// recovers) made again every recordLaterWait until recordLater.
const (
	recordReply     = 30 * time.Second
	recordLater     = 2 * time.Minute
	recordLaterWait = 250 * time.Millisecond
)

// convStep is a step of nfs4's Conversation (oncrpc/nfs4/conv.go), in the order the codec
// makes them with Verify and a LargestRead above 0: the name its recording takes, and the
// operations its call begins with (the operation count, the first operation and, after
// SEQUENCE, the second), checked against the call's arguments so that a reordered
// conversation cannot record a reply under another step's name.
type convStep struct {
	name     string
	count    uint32
	op1, op2 uint32
}

var convSteps = []convStep{
	{"exchange_id", 1, nfs4.OpExchangeID, 0},
	{"create_session", 1, nfs4.OpCreateSession, 0},
	{"reclaim_complete", 2, nfs4.OpSequence, nfs4.OpReclaimComplete},
	{"putrootfh", 3, nfs4.OpSequence, nfs4.OpPutRootFH},
	{"lookup-file", 5, nfs4.OpSequence, nfs4.OpPutRootFH},
	{"lookup-scratch", 5, nfs4.OpSequence, nfs4.OpPutRootFH},
	{"open-file", 3, nfs4.OpSequence, nfs4.OpPutFH},
	{"open-scratch", 3, nfs4.OpSequence, nfs4.OpPutFH},
	{"read-file", 3, nfs4.OpSequence, nfs4.OpPutFH},
	{"close-file", 3, nfs4.OpSequence, nfs4.OpPutFH},
	{"close-scratch", 3, nfs4.OpSequence, nfs4.OpPutFH},
	{"destroy_session", 1, nfs4.OpDestroySession, 0},
	{"destroy_clientid", 1, nfs4.OpDestroyClientID, 0},
}

// firstClosing is the index of close-file in convSteps.
const firstClosing = 9

// recorder is nfs4's Conversation, recording every call's arguments and the results knfsd
// sent for them.
type recorder struct {
	rpcproto.Conversation
	t     *testing.T
	dir   string
	step  int    // the Conversation's step, an index into convSteps
	label string // names the measured call's recording instead of its procedure
	call  []byte // the arguments of the call outstanding
}

// name is the recording's name of a call of proc.
func (r *recorder) name(proc int) string {
	switch {
	case proc == nfs4.PSession && r.step < len(convSteps):
		return convSteps[r.step].name
	case proc == nfs4.PSession:
		return "session-past-end"
	case r.label != "":
		return r.label
	}
	return r.Program().Procs[proc].Name
}

// Next keeps the recorder's step with the Conversation's: closing starts at the CLOSEs.
func (r *recorder) Next(closing bool) (proc, size int, ok bool) {
	if closing && r.step < firstClosing {
		r.step = firstClosing
	}
	return r.Conversation.Next(closing)
}

func (r *recorder) EncodeArgs(b []byte, proc, size, slot int, seed uint64, verify bool) {
	r.Conversation.EncodeArgs(b, proc, size, slot, seed, verify)
	r.call = append(r.call[:0], b...)
	if proc != nfs4.PSession {
		return
	}
	// Closing, the Conversation skips what it has nothing to undo.
	for r.step >= firstClosing && r.step < len(convSteps)-1 && checkStep(b, r.step) != nil {
		r.step++
	}
	if err := checkStep(b, r.step); err != nil {
		r.t.Errorf("conversation call %d: %v", r.step, err)
	}
}

func (r *recorder) DecodeResults(proc, slot int, body, chunk []byte, size int, seed uint64, verify bool) ([]byte, error) {
	name := r.name(proc)
	r.save(name+".call", r.call)
	r.save(name, body)
	if chunk != nil {
		r.save(name+".data", chunk)
	}
	data, err := r.Conversation.DecodeResults(proc, slot, body, chunk, size, seed, verify)
	if proc == nfs4.PSession && err == nil {
		r.step++
	}
	return data, err
}

// save writes b as hex, 64 digits a line, into the recording directory as name.hex.
func (r *recorder) save(name string, b []byte) {
	if err := writeHex(filepath.Join(r.dir, name+".hex"), b); err != nil {
		r.t.Error(err)
	}
}

// checkStep checks that b, a COMPOUND4args with an empty tag, begins as step's call does.
func checkStep(b []byte, step int) error {
	if step >= len(convSteps) {
		return errors.New("a step past the conversation's last")
	}
	s := convSteps[step]
	const hdr = 12 // tag (empty), minorversion, operation count
	if len(b) < hdr+4 {
		return fmt.Errorf("%s: %d bytes of arguments", s.name, len(b))
	}
	count, op1 := binary.BigEndian.Uint32(b[8:]), binary.BigEndian.Uint32(b[hdr:])
	var op2 uint32
	if at := hdr + 4 + 32; op1 == nfs4.OpSequence && len(b) >= at+4 {
		op2 = binary.BigEndian.Uint32(b[at:])
	}
	if count != s.count || op1 != s.op1 || op2 != s.op2 {
		return fmt.Errorf("%s: a COMPOUND of %d operations starting %d, %d; want %d starting %d, %d",
			s.name, count, op1, op2, s.count, s.op1, s.op2)
	}
	return nil
}

// TestIntegrationKnfsdRecordNFS4Replies sets an NFSv4.1 session up with knfsd over
// RPC-over-RDMA exactly as the engine does (nfs4's Conversation on a requester connection
// answering callbacks), makes one call of every measured procedure and a READ whose data
// comes in a Write chunk, tears the session down, and writes every call's arguments and
// results as hex into KNFSD_RECORD_DIR/nfs4: the recorded replies package nfs4 tests its
// decoders against (oncrpc/nfs4/testdata/knfsd).
func TestIntegrationKnfsdRecordNFS4Replies(t *testing.T) {
	addr, dir := os.Getenv("KNFSD_ADDR"), os.Getenv("KNFSD_RECORD_DIR")
	if addr == "" || dir == "" {
		t.Skip("KNFSD_ADDR and KNFSD_RECORD_DIR not set: runs in the soft-RoCE VM against knfsd (make vmtest)")
	}
	dir = filepath.Join(dir, "nfs4")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cred, err := (&nfs3.MountConfig{}).Credential()
	if err != nil {
		t.Fatal(err)
	}
	dev, err := verbs.New(verbs.Config{}).Open(os.Getenv("KNFSD_DEVICE"))
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()

	cv := nfs4.New(nfs4.Config{File: "rpcrdma-bench.dat", Scratch: "rpcrdma-bench.scratch", LargestRead: 4096,
		Owner: fmt.Sprintf("rpcrdma-bench-record/%d", time.Now().UnixNano()), Verify: true, Cred: cred}).NewConn()
	rec := &recorder{Conversation: cv, t: t, dir: dir}
	cfg := rpcrdma.Config{Codec: rec, Service: cv.Service(), ReverseCredits: 4, Cred: cred, MaxPayload: 64 << 10, Verify: true}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := rpcrdma.Dial(ctx, dev, addr, cfg)
	if err != nil {
		t.Fatalf("dial knfsd at %s: %v", addr, err)
	}
	defer conn.Close()
	p := conn.Params()
	rec.Start(rpcproto.ConnInfo{SendSize: p.Inline.SendSize, RecvSize: p.Inline.RecvSize, MaxPayload: cfg.MaxPayload,
		Credits: p.Credits, ReverseCredits: cfg.ReverseCredits})

	converse := func(closing bool) error {
		for {
			proc, size, ok := rec.Next(closing)
			if !ok {
				return nil
			}
			if err := recordCall(conn, proc, size); err != nil {
				return fmt.Errorf("%s: %w", rec.name(proc), err)
			}
		}
	}
	if err := converse(false); err != nil {
		t.Errorf("setting the session up: %v", err)
	} else {
		for _, c := range []struct {
			label      string
			proc, size int
		}{
			{"", nfs4.PGetattr, 0},
			{"", nfs4.PLookup, 0},
			{"", nfs4.PRead, 64},
			{"", nfs4.PWrite, 8},
			{"", nfs4.PWriteSync, 8},
			{"", nfs4.PCommit, 0},
			{"", nfs4.PReaddir, 4096},
			{"", nfs4.POpenClose, 0},
			// Above the 4 KiB inline threshold: knfsd writes the data into our Write chunk.
			{"read-chunk", nfs4.PRead, 8192},
		} {
			rec.label = c.label
			if err := recordCall(conn, c.proc, c.size); err != nil {
				t.Errorf("%s: %v", rec.name(c.proc), err)
			}
		}
		rec.label = ""
	}
	if err := converse(true); err != nil {
		t.Errorf("tearing the session down: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "read-chunk.data.hex")); err != nil {
		t.Errorf("the READ of 8192 bytes came without a Write chunk: %v", err)
	}
	t.Logf("recorded into %s", dir)
}

// recordCall makes one call of proc on conn and waits for its result, making it again while
// the server asks for it later.
func recordCall(conn *rpcrdma.Conn, proc, size int) error {
	later := time.Now().Add(recordLater)
	var res [4]rpcrdma.Result
	for {
		deadline := time.Now().Add(recordReply)
		var r rpcrdma.Result
		for sent, got := false, false; !got; {
			if time.Now().After(deadline) {
				return fmt.Errorf("no reply in %v", recordReply)
			}
			if !sent {
				err := conn.Submit(rpcrdma.Call{Proc: proc, Size: size, Tag: 1})
				if err != nil && !errors.Is(err, rpcrdma.ErrNoCredit) {
					return err
				}
				sent = err == nil
			}
			n, err := conn.Progress(res[:])
			for _, x := range res[:n] {
				if x.Tag == 1 {
					r, got = x, true
				}
			}
			if err != nil && !got {
				return err
			}
		}
		var le interface{ Later() bool }
		if errors.As(r.Err, &le) && le.Later() && time.Now().Before(later) {
			time.Sleep(recordLaterWait)
			continue
		}
		return r.Err
	}
}
