package nfs3

import (
	"context"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
)

// Descriptor is NFS version 3 as the command line knows it (--program nfs3, or nfs): calls
// to an export whose files are found over TCP before measuring (Target.Codec).
var Descriptor = rpcproto.Descriptor{Program: Prog, Aliases: []string{"nfs"}, Setup: setup}

func setup(ctx context.Context, t rpcproto.Target) (rpcproto.Codec, oncrpc.OpaqueAuth, error) {
	tg := &Target{Addr: t.Addr, Export: t.Export, File: t.File, Scratch: t.Scratch, Mount: MountConfig{MountdPort: t.MountdPort}}
	if _, _, err := tg.ParseExport(); err != nil && t.Export != "" {
		return nil, oncrpc.OpaqueAuth{}, &rpcproto.TargetError{Field: "export", Value: t.Export, Want: "HOST:/PATH"}
	}
	c, cred, err := tg.Codec(ctx, t.LargestRead)
	if err != nil {
		return nil, oncrpc.OpaqueAuth{}, err // not a nil *Codec in a non-nil rpcproto.Codec
	}
	return c, cred, nil
}
