package nfs3

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/internal/nfsbase"
)

// Target is the export of an NFS server a benchmark client drives and the files its
// procedures name.
type Target struct {
	// Addr is the server's NFS/RDMA address, HOST:PORT; Export defaults to its host's /.
	Addr string
	// Export is HOST:/PATH, "" for Addr's host and /.
	Export string
	// File is what read and getattr name, Scratch what write and commit name (overwritten).
	File, Scratch string
	// Mount finds the export's root handle (mountd's port, credential).
	Mount MountConfig
}

// SetupTimeout bounds Target.Codec's calls over TCP (mountd, LOOKUP, GETATTR).
const SetupTimeout = 30 * time.Second

// ParseExport returns the host and path of t's export.
func (t *Target) ParseExport() (host, path string, err error) {
	if t.Export == "" {
		h, _, err := net.SplitHostPort(t.Addr)
		if err != nil {
			return "", "", fmt.Errorf("nfs: server address %q: %w", t.Addr, err)
		}
		return h, "/", nil
	}
	host, path, ok := strings.Cut(t.Export, ":")
	if !ok || host == "" || !strings.HasPrefix(path, "/") {
		return "", "", fmt.Errorf("nfs: export %q: want HOST:/PATH", t.Export)
	}
	return host, path, nil
}

// Codec returns the codec of calls to t, with the handles of its files found on the server
// over TCP (Setup) unless largestRead is negative (NULL alone names no file), and the
// AUTH_SYS credential the calls carry. File must hold at least largestRead bytes.
func (t *Target) Codec(ctx context.Context, largestRead int) (*Codec, oncrpc.OpaqueAuth, error) {
	var none oncrpc.OpaqueAuth
	cred, err := t.Mount.Credential()
	if err != nil || largestRead < 0 {
		return &Codec{}, cred, err
	}
	host, export, err := t.ParseExport()
	if err != nil {
		return nil, none, err
	}
	ctx, cancel := context.WithTimeout(ctx, SetupTimeout)
	defer cancel()
	f, err := t.Mount.Setup(ctx, host, export, t.File, t.Scratch)
	if err != nil {
		return nil, none, err
	}
	if err := nfsbase.CheckSize(host+":"+export+"/"+t.File, f.Size, largestRead); err != nil {
		return nil, none, fmt.Errorf("nfs %w", err)
	}
	return &Codec{F: f}, cred, nil
}
