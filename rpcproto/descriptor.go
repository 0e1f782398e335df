package rpcproto

import (
	"context"
	"strconv"
	"strings"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc"
)

// Descriptor is how the tool knows a program beside its procedure table: the names the
// command line takes for it and, for a program served outside this tool, how calls to a
// target are set up. Each program package exports one; the command line's list of them is
// the one place that names them all, so that a new program is its package and a line there.
type Descriptor struct {
	// Program is the procedure table; its Name is the program's name on the command line.
	Program *Program
	// Aliases are other names for it.
	Aliases []string
	// Setup makes the Codec, and the credential the calls carry, for calls to t (nil for a
	// program whose calls need neither: the Codec of package benchprog). For a program with
	// a procedure measured alone, the Codec is a Measurer: the measurement comes with it.
	Setup func(ctx context.Context, t Target) (Codec, oncrpc.OpaqueAuth, error)
}

// Named reports whether d goes by name (any case).
func (d Descriptor) Named(name string) bool {
	if strings.EqualFold(d.Program.Name, name) {
		return true
	}
	for _, a := range d.Aliases {
		if strings.EqualFold(a, name) {
			return true
		}
	}
	return false
}

// Target is what a Setup needs to know of where the calls go and what they touch.
type Target struct {
	// Addr is the server, HOST:PORT.
	Addr string
	// Export is the exported directory, HOST:/PATH or /PATH; File is read by READ and
	// GETATTR, Scratch overwritten by WRITE, both in the export.
	Export, File, Scratch string
	// MountdPort is mountd's TCP port, 0 to ask the portmapper.
	MountdPort int
	// LargestRead is the largest READ the calls make: 0 when they name files but do not
	// read, -1 when they name none (NULL alone).
	LargestRead int
	// Verify checks the data the calls move.
	Verify bool
}

// TargetError is a Target field a Setup cannot use: which one, what it was and what it
// wants. The command line names the flag that set it.
type TargetError struct {
	Field, Value, Want string
}

func (e *TargetError) Error() string {
	return e.Field + " " + strconv.Quote(e.Value) + ": want " + e.Want
}
