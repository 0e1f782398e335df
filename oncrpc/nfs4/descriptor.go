package nfs4

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/internal/nfsbase"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
)

// Descriptor is NFS version 4.1 as the command line knows it (--program nfs4, or nfs4.1):
// each connection its own client with its own session, set up over the connection itself.
var Descriptor = rpcproto.Descriptor{Program: Prog, Aliases: []string{"nfs4.1"}, Setup: setup}

// setup names t's File and Scratch in its Export's path in the server's namespace (the
// root when empty; HOST:/PATH is taken as /PATH).
func setup(_ context.Context, t rpcproto.Target) (rpcproto.Codec, oncrpc.OpaqueAuth, error) {
	cred, err := nfsbase.Credential(nil)
	if err != nil {
		return nil, cred, err
	}
	export := t.Export
	if _, p, ok := strings.Cut(export, ":"); ok {
		export = p
	}
	if export != "" && !strings.HasPrefix(export, "/") {
		return nil, cred, &rpcproto.TargetError{Field: "export", Value: t.Export, Want: "/PATH or HOST:/PATH"}
	}
	host, _ := os.Hostname()
	// Unique to this process and run: a server takes an owner it knows for a client that
	// rebooted and ends that client's state.
	owner := fmt.Sprintf("rpcrdma-bench/%s/%d/%d", host, os.Getpid(), time.Now().UnixNano())
	return New(Config{File: t.File, Scratch: t.Scratch, Export: export, LargestRead: t.LargestRead, Owner: owner,
		Verify: t.Verify, Cred: cred}), cred, nil
}
