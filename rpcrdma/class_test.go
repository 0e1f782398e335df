package rpcrdma

import (
	"fmt"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
)

type classCase struct {
	name      string
	call      Call
	wantCall  rpcproto.Class
	wantReply rpcproto.Class
}

var procNames = map[int]string{benchprog.ProcNull: "NULL", benchprog.ProcEcho: "ECHO", benchprog.ProcSink: "SINK", benchprog.ProcSource: "SOURCE"}

// classCases lists, for inline threshold t, calls that must travel in each class: forced
// and chosen automatically.
func classCases(t int) []classCase {
	var cs []classCase
	add := func(proc int, size int, force, wc, wr rpcproto.Class) {
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
	add(N, 0, rpcproto.ClassAuto, rpcproto.ClassShort, rpcproto.ClassShort)
	add(E, 1, rpcproto.ClassAuto, rpcproto.ClassShort, rpcproto.ClassShort)
	add(E, 100, rpcproto.ClassAuto, rpcproto.ClassShort, rpcproto.ClassShort)
	// Every user of these cases negotiates responder-provided Read chunks: a reply that
	// would need a Reply chunk comes in one of those.
	add(E, big, rpcproto.ClassAuto, rpcproto.ClassPosZeroRead, rpcproto.ClassResponderRead)
	add(K, 7, rpcproto.ClassAuto, rpcproto.ClassShort, rpcproto.ClassShort)
	add(K, big, rpcproto.ClassAuto, rpcproto.ClassReadChunk, rpcproto.ClassShort)
	add(K, big+3, rpcproto.ClassAuto, rpcproto.ClassReadChunk, rpcproto.ClassShort)
	add(S, 5, rpcproto.ClassAuto, rpcproto.ClassShort, rpcproto.ClassShort)
	add(S, big, rpcproto.ClassAuto, rpcproto.ClassShort, rpcproto.ClassWriteChunk)
	add(S, big+1, rpcproto.ClassAuto, rpcproto.ClassShort, rpcproto.ClassWriteChunk)
	// Forced classes, including payloads that would have gone inline.
	add(N, 0, rpcproto.ClassShort, rpcproto.ClassShort, rpcproto.ClassShort)
	add(E, 33, rpcproto.ClassShort, rpcproto.ClassShort, rpcproto.ClassShort)
	add(K, 1, rpcproto.ClassReadChunk, rpcproto.ClassReadChunk, rpcproto.ClassShort)
	add(K, 0, rpcproto.ClassReadChunk, rpcproto.ClassReadChunk, rpcproto.ClassShort)
	add(K, 301, rpcproto.ClassReadChunk, rpcproto.ClassReadChunk, rpcproto.ClassShort)
	add(N, 0, rpcproto.ClassPosZeroRead, rpcproto.ClassPosZeroRead, rpcproto.ClassShort)
	add(E, 17, rpcproto.ClassPosZeroRead, rpcproto.ClassPosZeroRead, rpcproto.ClassShort)
	add(K, 999, rpcproto.ClassPosZeroRead, rpcproto.ClassPosZeroRead, rpcproto.ClassShort)
	add(S, 64, rpcproto.ClassPosZeroRead, rpcproto.ClassPosZeroRead, rpcproto.ClassShort)
	add(S, 1, rpcproto.ClassWriteChunk, rpcproto.ClassShort, rpcproto.ClassWriteChunk)
	add(S, 0, rpcproto.ClassWriteChunk, rpcproto.ClassShort, rpcproto.ClassWriteChunk)
	add(S, 4099, rpcproto.ClassWriteChunk, rpcproto.ClassShort, rpcproto.ClassWriteChunk)
	add(N, 0, rpcproto.ClassReplyChunk, rpcproto.ClassShort, rpcproto.ClassReplyChunk)
	add(E, 10, rpcproto.ClassReplyChunk, rpcproto.ClassShort, rpcproto.ClassReplyChunk)
	add(K, 10, rpcproto.ClassReplyChunk, rpcproto.ClassShort, rpcproto.ClassReplyChunk)
	add(S, 777, rpcproto.ClassReplyChunk, rpcproto.ClassShort, rpcproto.ClassReplyChunk)
	add(S, big, rpcproto.ClassReplyChunk, rpcproto.ClassShort, rpcproto.ClassReplyChunk)
	add(E, big, rpcproto.ClassResponderRead, rpcproto.ClassPosZeroRead, rpcproto.ClassResponderRead)
	add(S, big, rpcproto.ClassResponderRead, rpcproto.ClassShort, rpcproto.ClassResponderRead)
	// A responder-read call whose reply fits inline comes back inline.
	add(S, 10, rpcproto.ClassResponderRead, rpcproto.ClassShort, rpcproto.ClassShort)
	// Forced kinds (a workload's --class): the procedure's class of that kind, a long reply
	// in a responder-provided Read chunk.
	kind := func(proc, size int, k rpcproto.Kind, wc, wr rpcproto.Class) {
		cs = append(cs, classCase{name: fmt.Sprintf("%s/%d/kind %s", procNames[proc], size, k),
			call: Call{Proc: proc, Size: size, Kind: k}, wantCall: wc, wantReply: wr})
	}
	kind(S, big, rpcproto.Long, rpcproto.ClassShort, rpcproto.ClassResponderRead)
	kind(E, 100, rpcproto.Long, rpcproto.ClassPosZeroRead, rpcproto.ClassShort)
	kind(K, 100, rpcproto.Chunked, rpcproto.ClassReadChunk, rpcproto.ClassShort)
	kind(S, 100, rpcproto.Chunked, rpcproto.ClassShort, rpcproto.ClassWriteChunk)
	kind(E, 10, rpcproto.Short, rpcproto.ClassShort, rpcproto.ClassShort)
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
