package engine

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/nfs3"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/nfs4"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
)

// NFSCodec is the EngineConfig.Codec and Cred of NFS version 3 calls to t for the points
// pts: the files found only when some procedure names one, and the file checked to hold the
// largest READ.
func NFSCodec(ctx context.Context, t *nfs3.Target, pts []workloads.Point) (rpcproto.Codec, oncrpc.OpaqueAuth, error) {
	c, cred, err := t.Codec(ctx, largestRead(pts))
	if err != nil {
		return nil, oncrpc.OpaqueAuth{}, err // not a nil *nfs3.Codec in a non-nil Codec
	}
	return c, cred, nil
}

// largestRead is the largest READ of pts's mixes: 0 when they name files but do not read,
// -1 when they name none (NULL alone).
func largestRead(pts []workloads.Point) int {
	n := -1
	for _, pt := range pts {
		for _, e := range pt.Workload.Mix {
			if e.Proc != "null" {
				n = max(n, 0)
			}
			if e.Proc == "read" {
				n = max(n, e.Size.Largest())
			}
		}
	}
	return n
}

// IsNFS reports whether p is an NFS program, whose calls name files on an NFS/RDMA server.
func IsNFS(p *rpcproto.Program) bool { return p == nfs3.Prog || p == nfs4.Prog }

// NFS4Codec is the EngineConfig.Codec and Cred of NFS version 4.1 calls for the points pts,
// naming files's File and Scratch in its Export (a path in the server's namespace, its root
// when empty): each connection is its own client with its own session, set up over the
// connection itself (nfs4.Codec).
func NFS4Codec(files NFSFiles, pts []workloads.Point, verify bool) (rpcproto.Codec, oncrpc.OpaqueAuth, error) {
	cred, err := (&nfs3.MountConfig{}).Credential()
	if err != nil {
		return nil, cred, err
	}
	host, _ := os.Hostname()
	// Unique to this process and run: a server takes an owner it knows for a client that
	// rebooted and ends that client's state.
	owner := fmt.Sprintf("rpcrdma-bench/%s/%d/%d", host, os.Getpid(), time.Now().UnixNano())
	// The export's path in the server's namespace: HOST:/PATH as for nfs3, or /PATH.
	export := files.Export
	if _, p, ok := strings.Cut(export, ":"); ok {
		export = p
	}
	if export != "" && !strings.HasPrefix(export, "/") {
		return nil, cred, fmt.Errorf("NFS export %q: want /PATH or HOST:/PATH", files.Export)
	}
	return nfs4.New(nfs4.Config{File: files.File, Scratch: files.Scratch, Export: export, LargestRead: largestRead(pts), Owner: owner,
		Verify: verify, Cred: cred}), cred, nil
}

// NFSFiles name the files of --program nfs3 and nfs4, as a results file's config records them.
type NFSFiles struct {
	Export  string `json:"export"`
	File    string `json:"file"`
	Scratch string `json:"scratch"`
	// MountdPort is mountd's TCP port, 0 when the portmapper was asked.
	MountdPort int `json:"mountd_port,omitempty"`
}
