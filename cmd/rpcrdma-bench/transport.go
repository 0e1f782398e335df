package main

import (
	"github.com/spf13/pflag"

	"github.com/rpcrdma-bench/rpcrdma-bench/cli"
	"github.com/rpcrdma-bench/rpcrdma-bench/engine"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
)

// memoryFlag is --memory.
func memoryFlag(v *rpcrdma.MemoryMode) flagValue[rpcrdma.MemoryMode] {
	return flagValue[rpcrdma.MemoryMode]{v, "mode", func(x string) (m rpcrdma.MemoryMode, err error) {
		if x == "" || m.UnmarshalText([]byte(x)) != nil {
			return m, cli.Usagef("unknown memory mode %q (want preregistered or windows)", x)
		}
		return m, nil
	}, rpcrdma.MemoryMode.String}
}

// inlineRuleFlag is --inline-rule.
func inlineRuleFlag(v *rpcrdma.InlineRule) flagValue[rpcrdma.InlineRule] {
	return flagValue[rpcrdma.InlineRule]{v, "rule", func(x string) (r rpcrdma.InlineRule, err error) {
		if x == "" || r.UnmarshalText([]byte(x)) != nil {
			return r, cli.Usagef("unknown inline rule %q (want exact or linux)", x)
		}
		return r, nil
	}, rpcrdma.InlineRule.String}
}

// inlineSizeFlag is --send-size or --recv-size: an RFC 8797 inline size, a multiple of
// 1 KiB from 1 KiB to 256 KiB (rpcrdma.Config.Validate).
func inlineSizeFlag(v *int) flagValue[int] {
	return flagValue[int]{v, "size", func(x string) (int, error) {
		n, err := workloads.ParseSize(x)
		if err == nil && (n == 0 || (rpcrdma.Config{SendSize: n}).Validate() != nil) {
			err = cli.Usagef("inline size %s is not a multiple of 1k from 1k to 256k (RFC 8797 section 4.2)", x)
		}
		return n, err
	}, func(n int) string {
		if n == 0 {
			return ""
		}
		return workloads.FormatSize(n)
	}}
}

// addTransportFlags declares the engine's knobs on fs. requester selects the requester's
// wording (run, client, sweep) over the server's.
func addTransportFlags(fs *pflag.FlagSet, t *engine.Transport, requester bool) {
	fs.Var(memoryFlag(&t.Memory), "memory", "chunk memory: preregistered (one registration per connection, zero-copy, no per-RPC work) or windows (a memory window bound and invalidated per chunk of each RPC, as Linux FRWR)")
	if requester {
		fs.BoolVar(&t.RemoteInvalidate, "remote-invalidate", false, "offer remote invalidation (RFC 8797 R bit): replies end the RPC's window by Send With Invalidate, saving a LOCAL_INV; needs --memory windows")
		fs.BoolVar(&t.ResponderRead, "responder-read", false, "offer no Reply chunk: replies that would need one (long ECHO, --class long SOURCE) come back in a responder-provided Read chunk, pulled by RDMA Read and acknowledged with RDMA_DONE")
		fs.BoolVar(&t.DoneInvalidate, "done-invalidate", false, "send RDMA_DONE by Send With Invalidate of the server's Read chunk key when both ends set the R bit (the reliable-reply draft's SHOULD); needs --remote-invalidate")
		fs.IntVar(&t.Credits, "credits", 0, "credits to request, the most RPCs a connection may have outstanding (default: --depth)")
		fs.Var(inlineRuleFlag(&t.InlineRule), "inline-rule", "when a call or reply leaves the Send for chunks: exact (when its exact header and message exceed the inline size) or linux (when the message exceeds the inline size less the Linux client's worst-case header) (default: linux with --program nfs3 or nfs4, else exact)")
	} else {
		fs.BoolVar(&t.RemoteInvalidate, "remote-invalidate", false, "set the R bit: reply with Send With Invalidate to clients that set it too (their windows memory)")
		fs.BoolVar(&t.ResponderRead, "responder-read", false, "offer responder-provided Read chunks for replies too long for the client's reply resources (to clients that accept them)")
		// The server's --credits is its own (cli.ServeConfig.Credits), declared with its flags.
	}
	fs.Var(inlineSizeFlag(&t.SendSize), "send-size", "inline send size to advertise instead of the threshold (asymmetric thresholds)")
	fs.Var(inlineSizeFlag(&t.RecvSize), "recv-size", "inline receive size to advertise instead of the threshold (asymmetric thresholds)")
}
