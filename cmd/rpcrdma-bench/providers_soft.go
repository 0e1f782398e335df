package main

import (
	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/datapath/soft"
)

// The soft provider is always compiled in and is the default: it needs no RDMA hardware.
func init() { builtin = append([]datapath.Provider{soft.New(soft.Config{})}, builtin...) }
