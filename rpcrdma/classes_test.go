package rpcrdma

import (
	"errors"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma/wire"
)

// TestChooseClasses checks the class decision at its boundaries, with the header sizes
// written out: 28 bytes for an RDMA_MSG with no chunks (MinHeaderSize), 48 with one Reply
// chunk segment, 52 with one Write chunk segment (RFC 8166 section 4: 4 fixed words, three
// list discriminators, a segment of handle, length and 64-bit offset, the counts).
func TestChooseClasses(t *testing.T) {
	const th = 1024
	type q = classQuery
	for _, tc := range []struct {
		name   string
		q      classQuery
		cc, rc rpcproto.Class
		err    error
	}{
		{"both fit", q{msgLen: th - 28, replyLen: th - 28, sendT: th, recvT: th}, rpcproto.ClassShort, rpcproto.ClassShort, nil},
		{"call one byte over", q{msgLen: th - 27, replyLen: 100, sendT: th, recvT: th}, rpcproto.ClassPosZeroRead, rpcproto.ClassShort, nil},
		{"call over, DDP argument", q{msgLen: th - 27, replyLen: 100, callDDP: true, sendT: th, recvT: th}, rpcproto.ClassReadChunk, rpcproto.ClassShort, nil},
		{"reply one byte over", q{msgLen: 100, replyLen: th - 27, sendT: th, recvT: th}, rpcproto.ClassShort, rpcproto.ClassReplyChunk, nil},
		{"reply over, DDP result", q{msgLen: 100, replyLen: th - 27, replyDDP: true, sendT: th, recvT: th}, rpcproto.ClassShort, rpcproto.ClassWriteChunk, nil},
		// Responder-provided Read chunks negotiated: a reply that would need a Reply chunk
		// is offered no resources; a DDP result keeps its Write chunk, a fitting reply stays
		// inline, and without reply resources in its header a call of th-28 bytes fits.
		{"reply over, responder Read", q{msgLen: th - 28, replyLen: th - 27, sendT: th, recvT: th, responderRead: true}, rpcproto.ClassShort, rpcproto.ClassResponderRead, nil},
		{"reply over, DDP result, responder Read", q{msgLen: 100, replyLen: th - 27, replyDDP: true, sendT: th, recvT: th, responderRead: true}, rpcproto.ClassShort, rpcproto.ClassWriteChunk, nil},
		{"reply fits, responder Read", q{msgLen: 100, replyLen: th - 28, sendT: th, recvT: th, responderRead: true}, rpcproto.ClassShort, rpcproto.ClassShort, nil},
		// The reply's chunk is in the call header: a call that fits with 28 bytes of header
		// does not with 48 (Reply chunk) or 52 (Write chunk).
		{"Reply chunk pushes the call out", q{msgLen: th - 48 + 1, replyLen: th, sendT: th, recvT: th}, rpcproto.ClassPosZeroRead, rpcproto.ClassReplyChunk, nil},
		{"Reply chunk, call fits", q{msgLen: th - 48, replyLen: th, sendT: th, recvT: th}, rpcproto.ClassShort, rpcproto.ClassReplyChunk, nil},
		{"Write chunk, call fits", q{msgLen: th - 52, replyLen: th, replyDDP: true, sendT: th, recvT: th}, rpcproto.ClassShort, rpcproto.ClassWriteChunk, nil},
		{"Write chunk pushes the call out", q{msgLen: th - 51, replyLen: th, replyDDP: true, sendT: th, recvT: th}, rpcproto.ClassPosZeroRead, rpcproto.ClassWriteChunk, nil},
		// Each way its own threshold (RFC 8797: the thresholds may differ).
		{"asymmetric thresholds", q{msgLen: 3000, replyLen: 3000, sendT: 4096, recvT: 1024}, rpcproto.ClassShort, rpcproto.ClassReplyChunk, nil},
		// Forced classes.
		{"forced short", q{force: rpcproto.ClassShort, msgLen: th - 28, replyLen: 5000, sendT: th, recvT: th}, rpcproto.ClassShort, rpcproto.ClassShort, nil},
		{"forced short, too large", q{force: rpcproto.ClassShort, msgLen: th - 27, sendT: th, recvT: th}, 0, 0, ErrTooLarge},
		{"forced Read chunk", q{force: rpcproto.ClassReadChunk, msgLen: 10, callDDP: true, sendT: th, recvT: th}, rpcproto.ClassReadChunk, rpcproto.ClassShort, nil},
		{"forced Read chunk, no DDP item", q{force: rpcproto.ClassReadChunk, msgLen: 10, sendT: th, recvT: th}, 0, 0, ErrClassNotApplicable},
		{"forced Write chunk, no DDP item", q{force: rpcproto.ClassWriteChunk, sendT: th, recvT: th}, 0, 0, ErrClassNotApplicable},
		{"forced Position Zero", q{force: rpcproto.ClassPosZeroRead, msgLen: 10, sendT: th, recvT: th}, rpcproto.ClassPosZeroRead, rpcproto.ClassShort, nil},
		{"forced Reply chunk", q{force: rpcproto.ClassReplyChunk, msgLen: 10, replyLen: 10, sendT: th, recvT: th}, rpcproto.ClassShort, rpcproto.ClassReplyChunk, nil},
		{"forced responder Read, negotiated", q{force: rpcproto.ClassResponderRead, msgLen: 10, sendT: th, recvT: th, responderRead: true}, rpcproto.ClassShort, rpcproto.ClassResponderRead, nil},
		{"forced responder Read, not negotiated", q{force: rpcproto.ClassResponderRead, sendT: th, recvT: th}, 0, 0, ErrClassNotApplicable},
	} {
		cc, rc, err := chooseClasses(tc.q)
		if cc != tc.cc || rc != tc.rc || !errors.Is(err, tc.err) || (err == nil) != (tc.err == nil) {
			t.Errorf("%s: %s/%s, %v; want %s/%s, %v", tc.name, cc, rc, err, tc.cc, tc.rc, tc.err)
		}
	}
}

// TestInlineRuleLinux checks InlineLinux against the Linux client's own formula
// (net/sunrpc/xprtrdma/rpc_rdma.c: a call goes inline when the RPC message fits the send
// threshold less rpcrdma_max_call_header_size, a reply when it fits the receive threshold
// less rpcrdma_max_reply_header_size; re_max_rdma_segs is 3 for an FRWR depth that covers
// 1 MiB, plus 2 for head and tail), and InlineExact against the exact header, at 1k and 4k,
// around each threshold.
func TestInlineRuleLinux(t *testing.T) {
	const (
		hdrlenMin  = 7 * 4 // RPCRDMA_HDRLEN_MIN
		segment    = 4     // rpcrdma_segment_maxsz, words
		readchunk  = 1 + 1 + segment
		maxsegs    = 1 + 2
		maxCallHdr = hdrlenMin + maxsegs*readchunk*4 + 4 + segment*4 + 4
		maxReplHdr = hdrlenMin + 4 + maxsegs*segment*4 + 4
	)
	for _, th := range []int{1024, 4096} {
		for _, d := range []int{-128, -1, 0, 1, 64, 128} {
			// A WRITE: the call carries the payload, the reply is small.
			msgLen := th - maxCallHdr + d
			cc, _, err := chooseClasses(classQuery{rule: InlineLinux, msgLen: msgLen, replyLen: 100, callDDP: true, sendT: th, recvT: th})
			want := rpcproto.ClassReadChunk
			if msgLen <= th-maxCallHdr {
				want = rpcproto.ClassShort
			}
			if err != nil || cc != want {
				t.Errorf("linux, %d, call of %d bytes: %s, %v; want %s", th, msgLen, cc, err, want)
			}
			cc, _, _ = chooseClasses(classQuery{rule: InlineExact, msgLen: msgLen, replyLen: 100, callDDP: true, sendT: th, recvT: th})
			if want = rpcproto.ClassReadChunk; wire.MinHeaderSize+msgLen <= th {
				want = rpcproto.ClassShort
			}
			if cc != want {
				t.Errorf("exact, %d, call of %d bytes: %s; want %s", th, msgLen, cc, want)
			}
			// A READ: the reply carries the payload.
			replyLen := th - maxReplHdr + d
			_, rc, err := chooseClasses(classQuery{rule: InlineLinux, msgLen: 100, replyLen: replyLen, replyDDP: true, sendT: th, recvT: th})
			if want = rpcproto.ClassWriteChunk; replyLen <= th-maxReplHdr {
				want = rpcproto.ClassShort
			}
			if err != nil || rc != want {
				t.Errorf("linux, %d, reply of %d bytes: %s, %v; want %s", th, replyLen, rc, err, want)
			}
			_, rc, _ = chooseClasses(classQuery{rule: InlineExact, msgLen: 100, replyLen: replyLen, replyDDP: true, sendT: th, recvT: th})
			if want = rpcproto.ClassWriteChunk; wire.MinHeaderSize+replyLen <= th {
				want = rpcproto.ClassShort
			}
			if rc != want {
				t.Errorf("exact, %d, reply of %d bytes: %s; want %s", th, replyLen, rc, want)
			}
		}
	}
}

// Submit's shortcut agrees with chooseClasses wherever it answers: short both ways, for every
// message and reply length around the thresholds, under either rule.
func TestInlineBothAgrees(t *testing.T) {
	for _, rule := range []InlineRule{InlineExact, InlineLinux} {
		for _, th := range []int{1024, 4096} {
			for msg := th - 200; msg <= th+8; msg += 4 {
				for reply := th - 200; reply <= th+8; reply += 4 {
					if !inlineBoth(msg, reply, th, th, rule) {
						continue
					}
					for _, ddp := range []bool{false, true} {
						cc, rc, err := chooseClasses(classQuery{msgLen: msg, replyLen: reply, callDDP: ddp, replyDDP: ddp,
							sendT: th, recvT: th, rule: rule})
						if err != nil || cc != rpcproto.ClassShort || rc != rpcproto.ClassShort {
							t.Fatalf("rule %v, threshold %d, call %d, reply %d: chooseClasses %v/%v %v, shortcut short/short", rule, th, msg, reply, cc, rc, err)
						}
					}
				}
			}
		}
	}
	if inlineBoth(100, 100, 4096, 4096, InlineLinux) {
		t.Error("the shortcut answers under the linux rule, whose header room it does not know")
	}
}
