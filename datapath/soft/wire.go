package soft

import (
	"encoding/binary"
	"errors"
)

// Frame types of the TCP wire protocol; see WIRE.md.
const (
	frameConnect    = 1
	frameAccept     = 2
	frameReject     = 3
	frameSend       = 4
	frameWrite      = 5
	frameReadReq    = 6
	frameReadResp   = 7
	frameAck        = 8
	frameNak        = 9
	frameDisconnect = 10

	// flagInvalidate on a SEND frame: SEND_WITH_INV, rkey is the key to invalidate.
	flagInvalidate = 1

	headerLen = 24
	wireMagic = 0x53524d41 // "SRMA"
	// wireVersion 2: ACKs are cumulative (WIRE.md). A version 1 peer is refused at
	// connection setup.
	wireVersion = 2

	// helloLen is the CONNECT and ACCEPT payload before the private data: magic, version,
	// three reserved bytes, the sender's max_send_wr and max_recv_wr.
	helloLen = 16

	// maxFrame bounds a frame's payload: the largest message an SGL can describe.
	maxFrame = 1 << 31
	// maxReason bounds the reason a DISCONNECT carries; a receiver keeps that much.
	maxReason = 200
)

// header is the fixed 24-byte frame header, big-endian:
//
//	0  type   u8
//	1  flags  u8  (SEND: flagInvalidate; NAK and DISCONNECT: a datapath.Status)
//	   (DISCONNECT's payload, if any, is the reason as ASCII text)
//	2  -      u16 reserved, zero
//	4  seq    u32 request sequence number (requests and their responses)
//	8  addr   u64 remote address (WRITE, READ request)
//	16 rkey   u32 remote key (WRITE, READ request), key to invalidate (SEND)
//	20 len    u32 payload length; for a READ request the length to read
type header struct {
	typ   uint8
	flags uint8
	seq   uint32
	addr  uint64
	rkey  uint32
	len   uint32
}

func (h *header) put(b []byte) {
	_ = b[headerLen-1]
	b[0], b[1], b[2], b[3] = h.typ, h.flags, 0, 0
	binary.BigEndian.PutUint32(b[4:], h.seq)
	binary.BigEndian.PutUint64(b[8:], h.addr)
	binary.BigEndian.PutUint32(b[16:], h.rkey)
	binary.BigEndian.PutUint32(b[20:], h.len)
}

func (h *header) parse(b []byte) error {
	_ = b[headerLen-1]
	h.typ, h.flags = b[0], b[1]
	h.seq = binary.BigEndian.Uint32(b[4:])
	h.addr = binary.BigEndian.Uint64(b[8:])
	h.rkey = binary.BigEndian.Uint32(b[16:])
	h.len = binary.BigEndian.Uint32(b[20:])
	switch {
	case h.typ < frameConnect || h.typ > frameDisconnect:
		return errFrameType
	case b[2] != 0 || b[3] != 0:
		return errFrameReserved
	case h.len > maxFrame:
		return errFrameLength
	case h.len != 0 && (h.typ == frameAck || h.typ == frameNak):
		return errFrameAckLength
	}
	return nil
}

// hasPayload reports whether len counts bytes that follow the header.
func (h *header) hasPayload() bool { return h.typ != frameReadReq }

// hello is the CONNECT or ACCEPT payload.
type hello struct {
	maxSendWR, maxRecvWR uint32
	pd                   []byte
}

func (m *hello) bytes(pdLen int) []byte {
	b := make([]byte, helloLen+pdLen)
	binary.BigEndian.PutUint32(b, wireMagic)
	b[4] = wireVersion
	binary.BigEndian.PutUint32(b[8:], m.maxSendWR)
	binary.BigEndian.PutUint32(b[12:], m.maxRecvWR)
	copy(b[helloLen:], m.pd)
	return b
}

func parseHello(b []byte, pdLen int) (hello, error) {
	switch {
	case len(b) != helloLen+pdLen:
		return hello{}, errHelloLength
	case binary.BigEndian.Uint32(b) != wireMagic:
		return hello{}, errHelloMagic
	case b[4] != wireVersion:
		return hello{}, errHelloVersion
	}
	m := hello{maxSendWR: binary.BigEndian.Uint32(b[8:]), maxRecvWR: binary.BigEndian.Uint32(b[12:]),
		pd: append([]byte(nil), b[helloLen:]...)}
	if m.maxSendWR == 0 || m.maxSendWR > maxQPWR || m.maxRecvWR == 0 || m.maxRecvWR > maxQPWR {
		return hello{}, errHelloQueues
	}
	return m, nil
}

var (
	errFrameType      = errors.New("soft wire: unknown frame type")
	errFrameReserved  = errors.New("soft wire: reserved header bytes not zero")
	errFrameLength    = errors.New("soft wire: frame length over 2 GiB")
	errFrameAckLength = errors.New("soft wire: ACK or NAK frame with a non-zero length")
	errHelloLength    = errors.New("soft wire: connect or accept payload has the wrong length")
	errHelloMagic     = errors.New("soft wire: bad magic (not a soft RDMA peer)")
	errHelloVersion   = errors.New("soft wire: unsupported protocol version")
	errHelloQueues    = errors.New("soft wire: queue sizes out of range")
)
