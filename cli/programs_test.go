package cli

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/nfs3"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
)

// withProgram adds d to Programs for the test: a program is its package and its line there.
func withProgram(t *testing.T, d rpcproto.Descriptor) {
	saved := Programs
	Programs = append(append([]rpcproto.Descriptor(nil), Programs...), d)
	t.Cleanup(func() { Programs = saved })
}

// A program added to the list alone is found by its names, and a measurement against a
// server gets its codec from the program's Setup with the target the settings name.
func TestProgramFromTheList(t *testing.T) {
	prog := &rpcproto.Program{Name: "nfs42", Number: 100003, Version: 4, External: true,
		Procs: []rpcproto.Procedure{{Name: "null"}, {Name: "read", Payload: rpcproto.InReply, DDP: rpcproto.InReply}}}
	var got rpcproto.Target
	codec := rpcproto.NullCodec{}
	withProgram(t, rpcproto.Descriptor{Program: prog, Aliases: []string{"nfs4.2"},
		Setup: func(_ context.Context, tg rpcproto.Target) (rpcproto.Codec, oncrpc.OpaqueAuth, error) {
			got = tg
			return codec, oncrpc.OpaqueAuth{Flavor: oncrpc.FlavorSys}, nil
		}})
	d, ok := LookupProgram("NFS4.2")
	if !ok || d.Program != prog {
		t.Fatalf("LookupProgram(NFS4.2) = %v, %v", d.Program, ok)
	}
	w, err := workloads.Config{Prog: prog, Mix: []workloads.MixEntry{{Proc: "read", Size: workloads.Fixed(8192)}}}.Normalized()
	if err != nil {
		t.Fatal(err)
	}
	c := &RunConfig{Addr: "192.0.2.1:20049", NFS: NFSFiles{Export: "192.0.2.1:/x", File: "f"}, Workload: w}
	gotCodec, cred, err := c.programCodec(context.Background(), []workloads.Point{{Workload: w}})
	if err != nil || gotCodec != codec || cred.Flavor != oncrpc.FlavorSys {
		t.Fatalf("programCodec = %v, %v, %v", gotCodec, cred, err)
	}
	if want := (rpcproto.Target{Addr: "192.0.2.1:20049", Export: "192.0.2.1:/x", File: "f", LargestRead: 8192}); got != want {
		t.Errorf("Setup got %+v, want %+v", got, want)
	}
	c.Addr = ""
	if _, _, err := c.programCodec(context.Background(), nil); !errors.As(err, new(UsageError)) || !strings.Contains(err.Error(), "--program nfs42 needs --addr") {
		t.Errorf("without an address: %v", err)
	}
}

// A target a program refuses is a usage error naming the flag that set it.
func TestProgramTargetErrorNamesTheFlag(t *testing.T) {
	for _, d := range Programs {
		c := &RunConfig{Addr: "192.0.2.1:20049", NFS: NFSFiles{Export: "nopath"}, Workload: workloads.Config{Prog: d.Program}}
		_, _, err := c.programCodec(context.Background(), []workloads.Point{{Workload: workloads.Config{Mix: []workloads.MixEntry{{Proc: "null"}}}}})
		if !errors.As(err, new(UsageError)) || !strings.Contains(err.Error(), `--nfs-export "nopath": want `) {
			t.Errorf("%s: %v", d.Program.Name, err)
		}
	}
}

// Without --program the commands measure the benchmark program's default mix, the choice
// the workloads leave to them; --mix tells another program's preset and NFS itself apart.
func TestDefaultProgram(t *testing.T) {
	c := &RunConfig{Duration: time.Second, Workload: workloads.Config{Depth: 1, Connections: 1, Pollers: 1}}
	w, err := c.Base()
	if err != nil {
		t.Fatal(err)
	}
	if c.Table() != benchprog.Prog || w.Prog != benchprog.Prog || w.Program != 0 || workloads.MixName(w.Mix, w.Prog) != benchprog.NFSLike {
		t.Fatalf("default workload %+v", w)
	}
	for _, tc := range []struct {
		prog      *rpcproto.Program
		mix, want string
	}{
		{benchprog.Prog, "nfs", "ambiguous"},
		{nfs3.Prog, "nfs3", "ambiguous"},
		{nfs3.Prog, "nfs-like", "not of nfs3"},
	} {
		c := &RunConfig{Duration: time.Second, Mix: tc.mix, Workload: workloads.Config{Prog: tc.prog, Depth: 1, Connections: 1, Pollers: 1}}
		if _, err := c.Base(); err == nil || !strings.Contains(err.Error(), "--mix: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--program %s --mix %s: %v, want %q", tc.prog.Name, tc.mix, err, tc.want)
		}
	}
}
