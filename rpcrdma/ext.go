package rpcrdma

import "encoding/binary"

// The private data extension block. RFC 8797 defines no flag for the responder-provided Read
// chunk draft or for reverse-direction support, and its reserved bits must be sent as zero,
// so this endpoint appends its own 8-byte block after the RFC 8797 message: a distinct
// format identifier, as RFC 8797 section 5.2 expects other private data to carry, then one
// flags octet and three zero octets. Peers that do not know it ignore it (the RFC 8797
// search skips it; Linux reads only the first 8 bytes).
const extFormat uint32 = 0x72726231 // "rrb1"

const (
	extSize = 8

	extResponderRead = 1 << 0 // takes responder-provided Read chunks and RDMA_DONE
	extReverse       = 1 << 1 // accepts reverse-direction calls (RFC 8167)
)

type ext struct {
	responderRead, reverse bool
}

func encodeExt(b []byte, e ext) int {
	binary.BigEndian.PutUint32(b, extFormat)
	var f byte
	if e.responderRead {
		f |= extResponderRead
	}
	if e.reverse {
		f |= extReverse
	}
	b[4], b[5], b[6], b[7] = f, 0, 0, 0
	return extSize
}

// findExt searches received private data for the extension block; absent means no
// extensions.
func findExt(b []byte) ext {
	for i := 0; i+extSize <= len(b); i++ {
		if binary.BigEndian.Uint32(b[i:]) == extFormat {
			return ext{responderRead: b[i+4]&extResponderRead != 0, reverse: b[i+4]&extReverse != 0}
		}
	}
	return ext{}
}
