package nfs4_test

import (
	"encoding/binary"
	"fmt"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/nfs4"
)

// A requester writes 64 KiB in a session, the data moving by a Read chunk: the COMPOUND is
// SEQUENCE PUTFH WRITE GETATTR, and the inline call resumes with GETATTR after WRITE's
// length word. Its reply is decoded result by result.
func Example_writeReadChunk() {
	var sess nfs4.SessionID
	data := make([]byte, 64<<10) // registered memory, the Read chunk's source
	buf := make([]byte, 256)
	var c nfs4.Compound
	c.Start(buf, nil)
	c.Sequence(&nfs4.SequenceArgs{SessionID: sess, SequenceID: 9, SlotID: 3, HighestSlotID: 15})
	c.PutFH(nfs4.FH{1, 0, 7, 0})
	c.WriteReduced(&nfs4.WriteArgs{Offset: 0, Stable: nfs4.Unstable, Data: data})
	c.Getattr(nfs4.NewBitmap(nfs4.AttrChange, nfs4.AttrSize))
	n, err := c.Finish()
	if err != nil {
		fmt.Println(err)
		return
	}
	pos, length, _ := c.DDP()
	fmt.Printf("call: %d bytes inline, Read chunk at XDR position %d, %d bytes\n", n, pos, length)

	// The reply: NFS4_OK, tag "", 4 results: SEQUENCE4resok, PUTFH OK, WRITE4resok (65536
	// bytes, UNSTABLE4, a verifier), GETATTR {change 2, size 65536}.
	w := []uint32{0, 0, 4, nfs4.OpSequence, 0, 0, 0, 0, 0, 9, 3, 15, 15, 0, nfs4.OpPutFH, 0,
		nfs4.OpWrite, 0, 64 << 10, 0, 0xaabbccdd, 0xeeff0011,
		nfs4.OpGetattr, 0, 1, 0x18, 16, 0, 2, 0, 64 << 10}
	recv := make([]byte, 4*len(w))
	for i, v := range w {
		binary.BigEndian.PutUint32(recv[4*i:], v)
	}
	var (
		r   nfs4.CompoundRes
		seq nfs4.SequenceRes
		wr  nfs4.WriteRes
		ga  nfs4.GetattrRes
	)
	_ = r.Decode(recv)
	_ = r.Sequence(&seq)
	_, _ = r.Op(nfs4.OpPutFH)
	_ = r.Write(&wr)
	_ = r.Getattr(&ga)
	if _, err := r.Done(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("reply: %v, slot %d of %d, wrote %d bytes %v, size %d change %d\n",
		r.Status, seq.SlotID, seq.TargetHighestSlotID+1, wr.Count, wr.Committed, ga.Attr.Size, ga.Attr.Change)
	// Output:
	// call: 108 bytes inline, Read chunk at XDR position 96, 65536 bytes
	// reply: NFS4_OK, slot 3 of 16, wrote 65536 bytes UNSTABLE4, size 65536 change 2
}
