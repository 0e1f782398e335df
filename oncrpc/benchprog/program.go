package benchprog

import (
	"errors"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
)

// Prog is the program as the workloads and the requester see it; a procedure's index in
// its table is its number.
var Prog = &rpcproto.Program{
	Name:    "bench",
	Number:  Program,
	Version: Version,
	Procs: []rpcproto.Procedure{
		ProcNull:   {Name: "null", Number: ProcNull},
		ProcEcho:   {Name: "echo", Number: ProcEcho, Payload: rpcproto.Both},
		ProcSink:   {Name: "sink", Number: ProcSink, Payload: rpcproto.InCall, DDP: rpcproto.InCall},
		ProcSource: {Name: "source", Number: ProcSource, Payload: rpcproto.InReply, DDP: rpcproto.InReply},
	},
	Presets: map[string]string{
		NFSLike: "null:5,echo/128:40,echo/8k:5,source/4k:15,source/32k:10,source/256k:5,sink/4k:10,sink/32k:7,sink/256k:3",
	},
	DefaultMix: NFSLike,
}

// NFSLike names Prog's preset mix shaped like an NFS client's traffic (its DefaultMix), so
// one run exercises all three message classes at the default inline threshold of 4 KiB (and
// at RFC 8166's 1 KiB):
//
//	weight  procedure    size   stands for                         class at 4 KiB
//	    5   NULL            -   NULL/ping, lease renewal           short
//	   40   ECHO        128 B   GETATTR, LOOKUP, ACCESS            short
//	    5   ECHO        8 KiB   READDIR, large GETACL (no DDP)     long
//	   15   SOURCE      4 KiB   READ, small                        short or chunked
//	   10   SOURCE     32 KiB   READ                               chunked (Write chunk)
//	    5   SOURCE    256 KiB   READ, large                        chunked (Write chunk)
//	   10   SINK        4 KiB   WRITE, small                       short or chunked
//	    7   SINK       32 KiB   WRITE                              chunked (Read chunk)
//	    3   SINK      256 KiB   WRITE, large                       chunked (Read chunk)
//
// Half the RPCs are small metadata calls, as in the SPEC SFS and published NFS workload
// studies; reads outnumber writes 3:2. Whether a 4 KiB READ/WRITE goes inline depends on the
// header overhead against the threshold, which is exactly what a threshold sweep shows.
const NFSLike = "nfs-like"

// ErrSourceTooBig: the responder refused a SOURCE larger than its limit.
var ErrSourceTooBig = rpcproto.NewResultError("source_too_big", "SOURCE size exceeds the responder's limit")

// ErrSize: results that decode but do not carry the payload size the call asked for.
var ErrSize = errors.New("data not the size asked for")

var errResults = oncrpc.NewXDRError("results", ErrSize)

// Codec is the requester's half of the program: it marshals calls in place and checks
// replies. It keeps no state, so one value serves every connection.
type Codec struct{}

var _ rpcproto.Codec = (*Codec)(nil)

// Program returns Prog.
func (*Codec) Program() *rpcproto.Program { return Prog }

// Sizes implements rpcproto.Codec.
func (*Codec) Sizes(proc, size int) (args, prefix, results int) {
	switch proc {
	case ProcEcho:
		return 4 + pad4(size), 4, 4 + pad4(size)
	case ProcSink:
		return sinkPrefix + pad4(size), sinkPrefix, SinkResSize
	case ProcSource:
		return SourceArgsSize, SourceArgsSize, sourcePrefix + pad4(size)
	}
	return 0, 0, 0
}

// EncodeArgs implements rpcproto.Codec: the payload (ECHO's, SINK's) is already at the end
// of b; with verify it is filled with the pattern keyed by seed, which SINK's server checks
// and ECHO's reply brings back.
func (*Codec) EncodeArgs(b []byte, proc, size, slot int, seed uint64, verify bool) {
	switch proc {
	case ProcEcho:
		if verify {
			Fill(b[4:4+size], seed, 0)
		}
		e := Echo{Data: b[4 : 4+size]}
		e.Encode(b)
	case ProcSink:
		if verify {
			Fill(b[sinkPrefix:sinkPrefix+size], seed, 0)
		}
		a := SinkArgs{Seed: seed, Verify: verify, Data: b[sinkPrefix : sinkPrefix+size]}
		a.Encode(b)
	case ProcSource:
		a := SourceArgs{Seed: seed, Size: uint32(size), Fill: verify}
		a.Encode(b)
	}
}

// DecodeResults implements rpcproto.Codec.
func (*Codec) DecodeResults(proc, slot int, body, chunk []byte, size int, seed uint64, verify bool) ([]byte, error) {
	var data []byte
	switch proc {
	case ProcEcho:
		var e Echo
		if _, err := e.Decode(body); err != nil {
			return nil, err
		}
		if len(e.Data) != size {
			return nil, errResults
		}
		data = e.Data
	case ProcSink:
		var res SinkRes
		if _, err := res.Decode(body); err != nil {
			return nil, err
		}
		if int(res.Count) != size {
			return nil, errResults
		}
		if verify && res.Check != CheckOK {
			return nil, rpcproto.ErrVerify
		}
	case ProcSource:
		var res SourceRes
		var err error
		if chunk != nil {
			_, err = res.DecodeReduced(body, chunk)
		} else {
			_, err = res.Decode(body)
		}
		if err != nil {
			return nil, err
		}
		if res.Stat == SourceTooBig {
			return nil, ErrSourceTooBig
		}
		if len(res.Data) != size {
			return nil, errResults
		}
		data = res.Data
	}
	if verify && data != nil && Verify(data, seed, 0) >= 0 {
		return nil, rpcproto.ErrVerify
	}
	return data, nil
}
