package rpcrdma

import (
	"fmt"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
)

type classCase struct {
	name      string
	call      Call
	wantCall  Class
	wantReply Class
}

var procNames = map[uint32]string{benchprog.ProcNull: "NULL", benchprog.ProcEcho: "ECHO", benchprog.ProcSink: "SINK", benchprog.ProcSource: "SOURCE"}

// classCases lists, for inline threshold t, calls that must travel in each class: forced
// and chosen automatically.
func classCases(t int) []classCase {
	var cs []classCase
	add := func(proc uint32, size int, force, wc, wr Class) {
		cs = append(cs, classCase{
			name:     fmt.Sprintf("%s/%d/%s", procNames[proc], size, force),
			call:     Call{Proc: proc, Size: size, Class: force},
			wantCall: wc, wantReply: wr,
		})
	}
	const (
		N, E, K, S = benchprog.ProcNull, benchprog.ProcEcho, benchprog.ProcSink, benchprog.ProcSource
	)
	big := 2 * t // too big for any inline message at this threshold
	// Automatic choice, as RFC 8166 section 3.5 and the Linux client make it.
	add(N, 0, ClassAuto, ClassShort, ClassShort)
	add(E, 1, ClassAuto, ClassShort, ClassShort)
	add(E, 100, ClassAuto, ClassShort, ClassShort)
	add(E, big, ClassAuto, ClassPosZeroRead, ClassReplyChunk)
	add(K, 7, ClassAuto, ClassShort, ClassShort)
	add(K, big, ClassAuto, ClassReadChunk, ClassShort)
	add(K, big+3, ClassAuto, ClassReadChunk, ClassShort)
	add(S, 5, ClassAuto, ClassShort, ClassShort)
	add(S, big, ClassAuto, ClassShort, ClassWriteChunk)
	add(S, big+1, ClassAuto, ClassShort, ClassWriteChunk)
	// Forced classes, including payloads that would have gone inline.
	add(N, 0, ClassShort, ClassShort, ClassShort)
	add(E, 33, ClassShort, ClassShort, ClassShort)
	add(K, 1, ClassReadChunk, ClassReadChunk, ClassShort)
	add(K, 0, ClassReadChunk, ClassReadChunk, ClassShort)
	add(K, 301, ClassReadChunk, ClassReadChunk, ClassShort)
	add(N, 0, ClassPosZeroRead, ClassPosZeroRead, ClassShort)
	add(E, 17, ClassPosZeroRead, ClassPosZeroRead, ClassShort)
	add(K, 999, ClassPosZeroRead, ClassPosZeroRead, ClassShort)
	add(S, 64, ClassPosZeroRead, ClassPosZeroRead, ClassShort)
	add(S, 1, ClassWriteChunk, ClassShort, ClassWriteChunk)
	add(S, 0, ClassWriteChunk, ClassShort, ClassWriteChunk)
	add(S, 4099, ClassWriteChunk, ClassShort, ClassWriteChunk)
	add(N, 0, ClassReplyChunk, ClassShort, ClassReplyChunk)
	add(E, 10, ClassReplyChunk, ClassShort, ClassReplyChunk)
	add(K, 10, ClassReplyChunk, ClassShort, ClassReplyChunk)
	add(S, 777, ClassReplyChunk, ClassShort, ClassReplyChunk)
	add(S, big, ClassReplyChunk, ClassShort, ClassReplyChunk)
	add(E, big, ClassResponderRead, ClassPosZeroRead, ClassResponderRead)
	add(S, big, ClassResponderRead, ClassShort, ClassResponderRead)
	// A responder-read call whose reply fits inline comes back inline.
	add(S, 10, ClassResponderRead, ClassShort, ClassShort)
	return cs
}

// TestClassMatrix runs every class at thresholds 1 KiB, 4 KiB and 64 KiB, in the forward
// and the reverse direction, in both memory modes, with payload verification on.
func TestClassMatrix(t *testing.T) {
	for _, th := range []int{1024, 4096, 65536} {
		for _, mem := range []MemoryMode{MemoryPreregistered, MemoryWindows} {
			for _, reverse := range []bool{false, true} {
				name := fmt.Sprintf("%d/%s/reverse=%v", th, mem, reverse)
				t.Run(name, func(t *testing.T) {
					cfg := testCfg(th)
					cfg.Memory = mem
					cfg.ResponderRead = true
					cfg.ReverseCredits = 4
					p := newPair(t, cfg, cfg)
					from := p.req
					if reverse {
						// The reverse direction opens with the requester's first call.
						if r := p.call(p.req, Call{Proc: benchprog.ProcNull}); r.Err != nil {
							t.Fatal(r.Err)
						}
						from = p.rsp
					}
					for i, tc := range classCases(th) {
						tc.call.Tag = uint64(i)
						r := p.call(from, tc.call)
						if r.Err != nil || r.CallClass != tc.wantCall || r.ReplyClass != tc.wantReply {
							t.Errorf("%s: err %v, classes %s/%s, want %s/%s", tc.name, r.Err, r.CallClass, r.ReplyClass, tc.wantCall, tc.wantReply)
							continue
						}
						wantData := 0
						switch tc.call.Proc {
						case benchprog.ProcEcho, benchprog.ProcSource:
							wantData = tc.call.Size
						}
						if len(r.Data) != wantData {
							t.Errorf("%s: %d bytes of data, want %d", tc.name, len(r.Data), wantData)
						}
					}
					st := from.stats
					if st.Failed != 0 {
						t.Errorf("%d failed", st.Failed)
					}
					if mem == MemoryWindows && st.Binds == 0 {
						t.Error("no memory windows bound in MemoryWindows mode")
					}
				})
			}
		}
	}
}
