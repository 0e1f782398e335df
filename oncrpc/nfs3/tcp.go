package nfs3

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/internal/nfsbase"
)

// The portmapper (RFC 1833 section 3, version 2): where mountd's TCP port is found.
const (
	pmapProgram  uint32 = 100000
	pmapVersion  uint32 = 2
	pmapGetport  uint32 = 3
	pmapPort            = "111"
	ipprotoTCP   uint32 = 6
	maxRecord           = 1 << 20 // bound on a reassembled reply, fragment headers included
	lastFragment uint32 = 1 << 31 // record marking, RFC 5531 section 11
)

// MountConfig configures Mount and Unmount; the zero value asks the portmapper on host port
// 111 with the process's uid and gid. These calls are not on any hot path: they allocate, and
// use one TCP connection per RPC.
type MountConfig struct {
	// PortmapAddr is the portmapper's host:port; empty means host:111.
	PortmapAddr string
	// MountdPort, when not zero, is mountd's TCP port: the portmapper is not asked (a
	// server whose mountd listens on a fixed port, as Linux's rpc.mountd -p, behind a
	// firewall or a portmapper that refuses the query).
	MountdPort int
	// Dialer dials the portmapper and mountd; nil means a zero net.Dialer. Linux exports are
	// "secure" by default, and mountd then answers MNT from a port above 1023 with
	// MNT3ERR_ACCES: a privileged caller sets LocalAddr to a reserved port, others need the
	// export's "insecure" option.
	Dialer *net.Dialer
	// Cred is the AUTH_SYS credential of MNT and UMNT; nil means the process's uid and gid and
	// the host name.
	Cred *oncrpc.SysCred
}

// Mount asks host's mountd for the root file handle of the export path, with a zero
// MountConfig.
func Mount(ctx context.Context, host, path string) (FH, []oncrpc.Flavor, error) {
	var c MountConfig
	return c.Mount(ctx, host, path)
}

// Unmount tells host's mountd that the export path is no longer mounted, with a zero
// MountConfig.
func Unmount(ctx context.Context, host, path string) error {
	var c MountConfig
	return c.Unmount(ctx, host, path)
}

// Mount finds mountd's TCP port with the portmapper, calls MNT (version 3, AUTH_SYS) for path
// and returns the export's root file handle and the auth flavors the server accepts for it.
// Errors name the step and the cause; a refusal by mountd is its MountStat (errors.As), and a
// cancelled or expired ctx is reported as ctx's error (errors.Is).
func (c *MountConfig) Mount(ctx context.Context, host, path string) (FH, []oncrpc.Flavor, error) {
	body, err := c.mountCall(ctx, host, path, MountProcMnt)
	if err != nil {
		return nil, nil, err
	}
	var res MountRes
	if _, err := res.Decode(body); err != nil {
		return nil, nil, fmt.Errorf("mount %s:%s: MNT: result: %w", host, path, err)
	}
	if res.Status != MountOK {
		return nil, nil, fmt.Errorf("mount %s:%s: %w", host, path, res.Status)
	}
	flavors := make([]oncrpc.Flavor, res.AuthFlavors)
	for i := range flavors {
		flavors[i] = res.AuthFlavor(i)
	}
	return FH(append([]byte{}, res.FH...)), flavors, nil
}

// Unmount finds mountd as Mount does and calls UMNT for path. UMNT has no result: success
// means the server executed the call.
func (c *MountConfig) Unmount(ctx context.Context, host, path string) error {
	_, err := c.mountCall(ctx, host, path, MountProcUmnt)
	return err
}

// mountCall makes a MNT or UMNT call and returns its result body.
func (c *MountConfig) mountCall(ctx context.Context, host, path string, proc uint32) ([]byte, error) {
	op, step := "mount", "MNT"
	if proc == MountProcUmnt {
		op, step = "unmount", "UMNT"
	}
	fail := func(step string, err error) error { return fmt.Errorf("%s %s:%s: %s: %w", op, host, path, step, err) }
	margs := MountArgs{Path: path}
	args := make([]byte, margs.Size())
	if _, err := margs.Encode(args); err != nil {
		return nil, fail(step, err)
	}
	port := c.MountdPort
	if port == 0 {
		var err error
		if port, err = c.getport(ctx, host); err != nil {
			return nil, fail("portmapper GETPORT", err)
		}
	}
	cred, err := c.cred()
	if err != nil {
		return nil, fail(step, err)
	}
	call := oncrpc.Call{Prog: MountProgram, Vers: MountVersion, Proc: proc, Cred: cred}
	body, err := c.call(ctx, net.JoinHostPort(host, strconv.Itoa(port)), &call, args)
	if err != nil {
		return nil, fail(step, err)
	}
	return body, nil
}

// getport asks the portmapper for mountd's TCP port (PMAPPROC_GETPORT).
func (c *MountConfig) getport(ctx context.Context, host string) (int, error) {
	addr := c.PortmapAddr
	if addr == "" {
		addr = net.JoinHostPort(host, pmapPort)
	}
	// struct mapping { prog, vers, prot, port }; the port is ignored in a query.
	args := make([]byte, 16)
	put32(args, 0, MountProgram)
	put32(args, 4, MountVersion)
	put32(args, 8, ipprotoTCP)
	call := oncrpc.Call{Prog: pmapProgram, Vers: pmapVersion, Proc: pmapGetport}
	body, err := c.call(ctx, addr, &call, args)
	if err != nil {
		return 0, err
	}
	if len(body) < 4 {
		return 0, errors.New("reply: truncated port")
	}
	switch port := get32(body, 0); {
	case port == 0:
		return 0, errors.New("mountd (program 100005 version 3) is not registered for TCP")
	case port > 65535:
		return 0, fmt.Errorf("reply: port %d out of range", port)
	default:
		return int(port), nil
	}
}

// Credential is the AUTH_SYS credential of the calls Setup and Mount make, which an NFS
// requester's own calls should carry too: NFS servers answer AUTH_NONE only for NULL.
func (c *MountConfig) Credential() (oncrpc.OpaqueAuth, error) { return c.cred() }

// cred builds the AUTH_SYS credential of a MOUNT call.
func (c *MountConfig) cred() (oncrpc.OpaqueAuth, error) { return nfsbase.Credential(c.Cred) }

// call makes one RPC over a new TCP connection to addr and returns the result body of an
// accepted, successful reply. The connection's deadline follows ctx, so no step can hang past
// it; when ctx ends the error is ctx's, with the interrupted step's error as detail.
func (c *MountConfig) call(ctx context.Context, addr string, call *oncrpc.Call, args []byte) ([]byte, error) {
	d := c.Dialer
	if d == nil {
		d = &net.Dialer{}
	}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, ctxErr(ctx, err)
	}
	defer conn.Close()
	// A deadline in the past wakes a blocked Write or Read at once: cancellation as well as
	// expiry ends the call.
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	call.XID = rand.Uint32()
	msg := make([]byte, 4+call.Size()+len(args))
	h, err := call.Encode(msg[4:])
	if err != nil {
		return nil, err
	}
	copy(msg[4+h:], args)
	put32(msg, 0, lastFragment|uint32(len(msg)-4))
	if _, err := conn.Write(msg); err != nil {
		return nil, ctxErr(ctx, fmt.Errorf("send call: %w", err))
	}
	rec, err := readRecord(conn)
	if err != nil {
		return nil, ctxErr(ctx, fmt.Errorf("read reply: %w", err))
	}
	var r oncrpc.Reply
	off, err := r.Decode(rec)
	switch {
	case err != nil:
		return nil, fmt.Errorf("reply: %w", err)
	case r.XID != call.XID:
		return nil, fmt.Errorf("reply: xid %#x, want %#x", r.XID, call.XID)
	case r.Stat == oncrpc.Denied && r.Reject == oncrpc.RPCMismatch:
		return nil, fmt.Errorf("RPC denied: %s (versions %d-%d)", r.Reject, r.Low, r.High)
	case r.Stat == oncrpc.Denied:
		return nil, fmt.Errorf("RPC denied: %s: %s", r.Reject, r.Auth)
	case r.Accept == oncrpc.ProgMismatch:
		return nil, fmt.Errorf("RPC not executed: %s (versions %d-%d)", r.Accept, r.Low, r.High)
	case r.Accept != oncrpc.Success:
		return nil, fmt.Errorf("RPC not executed: %s", r.Accept)
	}
	return rec[off:], nil
}

// ctxErr reports err as ctx's error once ctx has ended: the deadline set by call, or the
// dialer's own, surfaced as an i/o timeout that does not say why.
func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w (%v)", context.Cause(ctx), err)
	}
	return err
}

var errRecordTooLong = errors.New("record longer than 1 MiB")

// readRecord reads one record of RFC 5531 section 11 record marking: fragments, each behind
// a 4-byte mark (last-fragment bit, 31-bit length), reassembled. The whole record, fragment
// marks included, is bounded by maxRecord, so a hostile mark neither allocates nor loops
// beyond it.
func readRecord(r io.Reader) ([]byte, error) {
	var rec []byte
	total := 0
	for {
		var mark [4]byte
		if _, err := io.ReadFull(r, mark[:]); err != nil {
			return nil, unexpectedEOF(err)
		}
		m := binary.BigEndian.Uint32(mark[:])
		n := int(m &^ lastFragment)
		total += 4 + n
		if total > maxRecord {
			return nil, errRecordTooLong
		}
		start := len(rec)
		rec = append(rec, make([]byte, n)...)
		if _, err := io.ReadFull(r, rec[start:]); err != nil {
			return nil, unexpectedEOF(err)
		}
		if m&lastFragment != 0 {
			return rec, nil
		}
	}
}

// unexpectedEOF turns a clean EOF into io.ErrUnexpectedEOF: a peer closing before the last
// fragment has cut a reply short.
func unexpectedEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
