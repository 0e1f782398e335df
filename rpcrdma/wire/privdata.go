package wire

import (
	"encoding/binary"
	"errors"
	"strconv"
)

// RFC 8797 connection private data: the 8 bytes each peer puts in the RDMA-CM private data
// of its connect request or accept, advertising its inline thresholds and whether it can
// take remote invalidation.
const (
	// PrivateDataFormat is the Format Identifier that starts the message (RFC 8797 section 4).
	PrivateDataFormat uint32 = 0xf6ab0e18
	// PrivateDataVersion is the only message format version defined.
	PrivateDataVersion = 1
	// PrivateDataSize is the encoded size of a version 1 message.
	PrivateDataSize = 8

	// MinInline and MaxInline bound the inline threshold sizes the Send Size and Receive Size
	// fields can carry, in steps of 1024 (RFC 8797 section 4.2). MinInline is also RFC 8166's
	// default threshold for a peer that sends no private data.
	MinInline = 1024
	MaxInline = 256 * 1024

	flagRemoteInvalidate = 1 << 0 // the R bit: bit 0 of the flags octet
)

// PrivateData is an RFC 8797 message.
type PrivateData struct {
	// Version is the message format version; Encode writes PrivateDataVersion when zero.
	Version uint8
	// RemoteInvalidate (the R bit) says this peer supports remote invalidation: as a
	// requester, every rkey it exposes may be invalidated by the responder's Send With
	// Invalidate; as a responder, it can send them (RFC 8797 sections 3.2 and 4.1).
	RemoteInvalidate bool
	// SendSize is the largest message this peer will send in one RDMA Send, in bytes.
	SendSize int
	// RecvSize is the largest message this peer can receive in one RDMA Receive, in bytes.
	RecvSize int
}

// DefaultPrivateData is what a peer that sent no valid private data is taken to have said
// (RFC 8797 section 5.1): RFC 8166's 1024-byte thresholds and no remote invalidation.
var DefaultPrivateData = PrivateData{
	Version:  PrivateDataVersion,
	SendSize: MinInline,
	RecvSize: MinInline,
}

// ErrPrivateData is wrapped by every PrivateData.Encode error.
var ErrPrivateData = errors.New("rpcrdma: invalid private data")

// Encode writes p's 8-byte wire form at the start of b and returns PrivateDataSize. The
// sizes must be multiples of 1024 from MinInline to MaxInline; the reserved flag bits are
// written as zero.
func (p PrivateData) Encode(b []byte) (int, error) {
	v := p.Version
	if v == 0 {
		v = PrivateDataVersion
	}
	if v != PrivateDataVersion {
		return 0, privError("version " + strconv.Itoa(int(p.Version)) + " is not 1")
	}
	send, err := encodeInline("send", p.SendSize)
	if err != nil {
		return 0, err
	}
	recv, err := encodeInline("receive", p.RecvSize)
	if err != nil {
		return 0, err
	}
	if len(b) < PrivateDataSize {
		return 0, privError("buffer of " + strconv.Itoa(len(b)) + " bytes, need 8")
	}
	binary.BigEndian.PutUint32(b, PrivateDataFormat)
	b[4] = v
	b[5] = 0
	if p.RemoteInvalidate {
		b[5] = flagRemoteInvalidate
	}
	b[6] = send
	b[7] = recv
	return PrivateDataSize, nil
}

func encodeInline(which string, size int) (byte, error) {
	if size < MinInline || size > MaxInline || size%1024 != 0 {
		return 0, privError(which + " size " + strconv.Itoa(size) +
			" is not a multiple of 1024 from 1024 to 262144")
	}
	return byte(size/1024 - 1), nil
}

type privDataError string

func (e privDataError) Error() string { return ErrPrivateData.Error() + ": " + string(e) }
func (e privDataError) Unwrap() error { return ErrPrivateData }

func privError(s string) error { return privDataError(s) }

// FindPrivateData searches b, the private data received in a connect request or accept
// event, for an RFC 8797 message. The Format Identifier may start at any byte offset
// (RFC 8797 section 5.2: other layers, MPAv2 for one, may put their own data first, and the
// transport may pad the buffer, as rxe does to 196 bytes). A candidate counts only if its
// version is 1 and its 8 bytes fit in b; otherwise the search goes on after it. Reserved
// flag bits are ignored. When nothing valid is found it returns DefaultPrivateData and false,
// which is how the peer must then be treated (section 5.1).
func FindPrivateData(b []byte) (PrivateData, bool) {
	for i := 0; i+PrivateDataSize <= len(b); i++ {
		if binary.BigEndian.Uint32(b[i:]) != PrivateDataFormat || b[i+4] != PrivateDataVersion {
			continue
		}
		return PrivateData{
			Version:          b[i+4],
			RemoteInvalidate: b[i+5]&flagRemoteInvalidate != 0,
			SendSize:         (int(b[i+6]) + 1) * 1024,
			RecvSize:         (int(b[i+7]) + 1) * 1024,
		}, true
	}
	return DefaultPrivateData, false
}

// Inline is the outcome of the RFC 8797 exchange for one side of a connection.
type Inline struct {
	// SendSize is this side's inline threshold for messages it sends: no RDMA Send from it
	// may be larger.
	SendSize int
	// RecvSize is the largest message the peer may send to this side; receive buffers of this
	// size suffice.
	RecvSize int
	// RemoteInvalidate: both peers set the R bit, so the responder may use Send With
	// Invalidate (RFC 8797 section 4.1).
	RemoteInvalidate bool
}

// Negotiate applies RFC 8797 section 4.2 from one side's point of view: own is what this side
// advertised, peer what it received (DefaultPrivateData when FindPrivateData found nothing).
// Each direction's threshold is the smaller of the sender's send size and the receiver's
// receive size; the rule is the same for client and server. own must hold sizes Encode accepts; a
// decoded peer always does.
func Negotiate(own, peer PrivateData) Inline {
	return Inline{
		SendSize:         min(own.SendSize, peer.RecvSize),
		RecvSize:         min(own.RecvSize, peer.SendSize),
		RemoteInvalidate: own.RemoteInvalidate && peer.RemoteInvalidate,
	}
}
