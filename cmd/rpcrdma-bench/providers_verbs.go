package main

import (
	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/datapath/verbs"
)

// The verbs provider is always listed: built without -tags verbs (or without cgo) it is the
// package's stub, whose Devices and Open say how to build the real one.
func init() { builtin = append(builtin, datapath.Provider(verbs.New(verbs.Config{}))) }
