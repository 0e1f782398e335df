package knfsd

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/datapath/verbs"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma/wire"
	"golang.org/x/sys/unix"
)

const (
	nfsProg = 100003
	bufSize = 4096
)

// TestIntegrationKnfsdNullCall connects to knfsd with RFC 8797 private data, decodes what the
// server answers in its accept, sends an NFSv3 NULL call as RDMA_MSG and decodes the reply.
func TestIntegrationKnfsdNullCall(t *testing.T) {
	addr := os.Getenv("KNFSD_ADDR")
	if addr == "" {
		t.Skip("KNFSD_ADDR not set: runs in the soft-RoCE VM against knfsd (make vmtest)")
	}
	p := verbs.New(verbs.Config{})
	dev, err := p.Open(os.Getenv("KNFSD_DEVICE"))
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	cq, err := dev.NewCQ(16)
	if err != nil {
		t.Fatal(err)
	}
	defer cq.Close()
	mem, err := unix.Mmap(-1, 0, 2*bufSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(mem)
	mr, err := dev.Register(mem, datapath.AccessLocalWrite)
	if err != nil {
		t.Fatal(err)
	}
	defer mr.Close()
	sendBuf, recvBuf := mem[:bufSize], mem[bufSize:]

	own := wire.PrivateData{SendSize: bufSize, RecvSize: bufSize}
	var priv [wire.PrivateDataSize]byte
	if _, err := own.Encode(priv[:]); err != nil {
		t.Fatal(err)
	}
	t.Logf("our private data: % x", priv)

	// The server may send as soon as it accepts (it does not, but RPC-over-RDMA requires the
	// receive first), so the QP is created by Connect and the receive posted right after:
	// knfsd answers only once our call arrives.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn, err := dev.Connect(ctx, addr, datapath.QPConfig{SendCQ: cq, RecvCQ: cq, MaxSendWR: 4, MaxRecvWR: 4}, priv[:])
	if err != nil {
		t.Fatalf("connect to knfsd at %s: %v", addr, err)
	}
	defer conn.Close()

	peerRaw := conn.PeerPrivateData()
	peer, ok := wire.FindPrivateData(peerRaw)
	t.Logf("knfsd private data (%d bytes received): % x", len(peerRaw), peerRaw[:min(len(peerRaw), 16)])
	if !ok {
		t.Fatalf("no RFC 8797 private data from knfsd in % x", peerRaw)
	}
	t.Logf("decoded: version %d, remote invalidate %v, send size %d, receive size %d",
		peer.Version, peer.RemoteInvalidate, peer.SendSize, peer.RecvSize)
	if peer.Version != 1 || peer.SendSize != 4096 || peer.RecvSize != 4096 {
		t.Errorf("knfsd private data %+v, want version 1, 4096/4096", peer)
	}
	in := wire.Negotiate(own, peer)
	t.Logf("negotiated inline: %+v", in)

	if _, err := conn.PostRecv([]datapath.RecvWR{{ID: 1, SGL: []datapath.SGE{{Addr: mr.Addr() + bufSize, Length: bufSize, LKey: mr.LKey()}}}}); err != nil {
		t.Fatal(err)
	}

	const xid = 0x12345678
	hdr := wire.Header{XID: xid, Vers: wire.Version, Credit: 32, Proc: wire.ProcMsg}
	n, err := hdr.Encode(sendBuf)
	if err != nil {
		t.Fatal(err)
	}
	call := oncrpc.Call{XID: xid, Prog: nfsProg, Vers: 3, Proc: 0}
	m, err := call.Encode(sendBuf[n:])
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("call (%d-byte transport header + %d-byte RPC): % x", n, m, sendBuf[:n+m])
	if _, err := conn.PostSend([]datapath.SendWR{{ID: 2, Op: datapath.OpSend, Flags: datapath.FlagSignaled,
		SGL: []datapath.SGE{{Addr: mr.Addr(), Length: uint32(n + m), LKey: mr.LKey()}}}}); err != nil {
		t.Fatal(err)
	}

	var got datapath.Completion
	var wcs [4]datapath.Completion
	for sent, recvd := false, false; !sent || !recvd; {
		k, err := cq.Poll(wcs[:])
		if err != nil {
			t.Fatal(err)
		}
		if k == 0 {
			if err := cq.Wait(10 * time.Second); err != nil {
				t.Fatalf("waiting for knfsd's reply: %v", err)
			}
			continue
		}
		for _, wc := range wcs[:k] {
			if wc.Status != datapath.StatusSuccess {
				t.Fatalf("completion %+v: %v (conn: %v)", wc, wc.Status, conn.Err())
			}
			switch wc.ID {
			case 1:
				recvd, got = true, wc
			case 2:
				sent = true
			}
		}
	}
	reply := recvBuf[:got.ByteLen]
	t.Logf("reply (%d bytes): % x", len(reply), reply)

	var rh wire.Header
	payload, err := rh.Decode(reply, nil)
	if err != nil {
		t.Fatalf("transport header: %v", err)
	}
	t.Logf("transport header: xid %#x version %d credits %d %v, read list %d, write list %d, reply chunk %v",
		rh.XID, rh.Vers, rh.Credit, rh.Proc, len(rh.ReadList), len(rh.WriteList), rh.HasReply)
	if rh.XID != xid || rh.Vers != wire.Version || rh.Proc != wire.ProcMsg || rh.Credit == 0 {
		t.Errorf("transport header %+v: want xid %#x, version 1, RDMA_MSG, credits > 0", rh, xid)
	}
	var r oncrpc.Reply
	if _, err := r.Decode(payload); err != nil {
		t.Fatalf("RPC reply: %v", err)
	}
	t.Logf("RPC reply: xid %#x %v verifier %v %v", r.XID, r.Stat, r.Verf.Flavor, r.Accept)
	if r.XID != xid || r.Stat != oncrpc.Accepted || r.Accept != oncrpc.Success {
		t.Errorf("RPC reply %+v: want xid %#x, MSG_ACCEPTED, SUCCESS", r, xid)
	}
}
