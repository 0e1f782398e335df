package oncrpc

import "encoding/binary"

// pad4 rounds n up to a multiple of four: the encoded size of an opaque of n bytes (XDR
// round-up, RFC 4506 section 4.10).
func pad4(n int) int { return (n + 3) &^ 3 }

func get32(b []byte, off int) uint32 { return binary.BigEndian.Uint32(b[off:]) }

func put32(b []byte, off int, v uint32) { binary.BigEndian.PutUint32(b[off:], v) }

// putOpaque writes the data of an opaque and zeroes its pad; b must hold pad4(len(data)) bytes
// from off. Returns the offset after the pad.
func putOpaque(b []byte, off int, data []byte) int {
	if len(data) == 0 {
		// AUTH_NONE bodies, on every call and reply: skip the copy and the clear, which
		// cost a runtime call each even when empty (~100 instructions per RPC).
		return off
	}
	n := copy(b[off:], data)
	end := off + pad4(n)
	clear(b[off+n : end])
	return end
}

// PutData writes the data of a program's opaque item at off and zeroes its XDR pad, unless
// the data already lies there (a payload filled in place, which is then not copied); b must
// hold pad4(len(data)) bytes from off. It returns the offset after the pad.
func PutData(b []byte, off int, data []byte) int {
	n := len(data)
	if n > 0 && &b[off] != &data[0] {
		copy(b[off:off+n], data)
	}
	end := off + pad4(n)
	clear(b[off+n : end])
	return end
}

// ChunkData checks that a chunk of the given length can stand for an opaque item of n bytes
// and returns the item's bytes: a requester may send a Read chunk with or without the
// item's XDR pad ("Read Chunk Round-up", RFC 8166 section 3.4.5), and a responder never
// writes the pad into a Write chunk ("Write Chunk Round-up", section 3.4.6).
func ChunkData(chunk []byte, n uint32) ([]byte, bool) {
	if len(chunk) < int(n) || len(chunk) > pad4(int(n)) {
		return nil, false
	}
	return chunk[:n:n], true
}

// PutVarOpaque writes a variable-length opaque item at off (RFC 4506 section 4.10): its
// length word, then its data as PutData does (data already in place is not copied); b must
// hold 4+pad4(len(data)) bytes from off. It returns the offset after the pad.
func PutVarOpaque(b []byte, off int, data []byte) int {
	put32(b, off, uint32(len(data)))
	return PutData(b, off+4, data)
}
