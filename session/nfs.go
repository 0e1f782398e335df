package session

import (
	"context"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/nfs3"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
)

// NFSCodec is the EngineConfig.Codec and Cred of NFS version 3 calls to t for the points
// pts: the files found only when some procedure names one, and the file checked to hold the
// largest READ.
func NFSCodec(ctx context.Context, t *nfs3.Target, pts []workloads.Point) (rpcproto.Codec, oncrpc.OpaqueAuth, error) {
	largestRead := -1 // no file named: NULL alone
	for _, pt := range pts {
		for _, e := range pt.Workload.Mix {
			if e.Proc != "null" {
				largestRead = max(largestRead, 0)
			}
			if e.Proc == "read" {
				largestRead = max(largestRead, e.Size.Largest())
			}
		}
	}
	c, cred, err := t.Codec(ctx, largestRead)
	if err != nil {
		return nil, oncrpc.OpaqueAuth{}, err // not a nil *nfs3.Codec in a non-nil Codec
	}
	return c, cred, nil
}
