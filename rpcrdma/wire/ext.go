package wire

import "encoding/binary"

// The private data extension block. RFC 8797 defines no flag for the responder-provided Read
// chunk draft or for reverse-direction support, and its reserved bits must be sent as zero,
// so this endpoint appends its own 8-byte block after the RFC 8797 message: a distinct
// format identifier, as RFC 8797 section 5.2 expects other private data to carry, then one
// flags octet and three zero octets.
//
// The identifier is unregistered: RFC 8797 section 8 creates an IANA registry of CM private
// data format identifiers, and 0x72726231 is not in it. It is private to this program; two
// of its endpoints recognise each other by it, and nothing else may be assumed of it.
//
// What a peer that does not know it sees: 16 bytes of private data where it expects 8. Linux
// reads the RFC 8797 message at offset 0 only if its identifier matches, and ignores every
// byte past the 8 it knows, so it neither enables the extensions nor fails the connection.
// An RFC 8166-only peer ignores private data altogether. A peer that scanned for other
// registered identifiers would find none here. The extensions then stay off on both ends,
// because each end enables them only when the other's block says so.
const extFormat uint32 = 0x72726231 // "rrb1", unregistered (RFC 8797 section 8)

const (
	// ExtSize is the encoded size of the extension block.
	ExtSize = 8

	extResponderRead = 1 << 0 // takes responder-provided Read chunks and RDMA_DONE
	extReverse       = 1 << 1 // accepts reverse-direction calls (RFC 8167)
)

// Ext is the extension block's content: what this endpoint offers beyond RFC 8797.
type Ext struct {
	ResponderRead bool // takes responder-provided Read chunks and RDMA_DONE
	Reverse       bool // accepts reverse-direction calls (RFC 8167)
}

// EncodeExt writes e's block at the start of b, which holds at least ExtSize bytes, and
// returns ExtSize.
func EncodeExt(b []byte, e Ext) int {
	binary.BigEndian.PutUint32(b, extFormat)
	var f byte
	if e.ResponderRead {
		f |= extResponderRead
	}
	if e.Reverse {
		f |= extReverse
	}
	b[4], b[5], b[6], b[7] = f, 0, 0, 0
	return ExtSize
}

// FindExt searches received private data for the extension block; absent means no
// extensions.
func FindExt(b []byte) Ext {
	for i := 0; i+ExtSize <= len(b); i++ {
		if binary.BigEndian.Uint32(b[i:]) == extFormat {
			return Ext{ResponderRead: b[i+4]&extResponderRead != 0, Reverse: b[i+4]&extReverse != 0}
		}
	}
	return Ext{}
}
