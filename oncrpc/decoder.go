package oncrpc

import "encoding/binary"

// Decoder walks the XDR stream of a program's arguments or results with a sticky error: after
// the first failure every read returns zero values and Err stays the first failure, so a
// decoder reads its fields in wire order and checks the error once at the end (Done).
// Truncation anywhere is reported as Trunc, the error of the item being decoded; invalid
// items name themselves through Fail. Nothing allocates.
type Decoder struct {
	B     []byte
	Off   int
	Err   *XDRError
	Trunc *XDRError
}

// Fail records e unless an earlier failure is recorded.
func (d *Decoder) Fail(e *XDRError) {
	if d.Err == nil {
		d.Err = e
	}
}

// Take consumes n bytes and returns them.
func (d *Decoder) Take(n int) ([]byte, bool) {
	if d.Err != nil {
		return nil, false
	}
	if n < 0 || n > len(d.B)-d.Off {
		d.Fail(d.Trunc)
		return nil, false
	}
	p := d.B[d.Off : d.Off+n : d.Off+n]
	d.Off += n
	return p, true
}

// Uint32 decodes an unsigned int (also an enum, whose range the caller checks).
func (d *Decoder) Uint32() uint32 {
	p, ok := d.Take(4)
	if !ok {
		return 0
	}
	return get32(p, 0)
}

// Uint64 decodes an unsigned hyper.
func (d *Decoder) Uint64() uint64 {
	p, ok := d.Take(8)
	if !ok {
		return 0
	}
	return binary.BigEndian.Uint64(p)
}

// Bool decodes an XDR bool; only 0 and 1 are legal (RFC 4506 section 4.4): anything else
// fails with bad.
func (d *Decoder) Bool(bad *XDRError) bool {
	switch d.Uint32() {
	case 0:
		return false
	case 1:
		return true
	}
	d.Fail(bad)
	return false
}

// Enum decodes an enum whose values run from 0 to last: anything else fails with bad and
// decodes as 0.
func (d *Decoder) Enum(last uint32, bad *XDRError) uint32 {
	v := d.Uint32()
	if v > last {
		d.Fail(bad)
		return 0
	}
	return v
}

// Length decodes the length word of an opaque or the count of an array, which may be at most
// max (else long).
func (d *Decoder) Length(max uint32, long *XDRError) int {
	n := d.Uint32()
	if n > max {
		d.Fail(long)
		return 0
	}
	return int(n)
}

// Bytes consumes the body of an opaque of n bytes and its pad and returns the body.
func (d *Decoder) Bytes(n int) []byte {
	p, ok := d.Take(pad4(n))
	if !ok {
		return nil
	}
	return p[:n:n]
}

// Opaque decodes a variable-length opaque of at most max bytes (else long).
func (d *Decoder) Opaque(max uint32, long *XDRError) []byte {
	return d.Bytes(d.Length(max, long))
}

// Chunk takes the data of an opaque item of n bytes, its length word already decoded, from
// chunk, the bytes an RPC-over-RDMA chunk delivered in its place (ChunkData); bad if their
// length does not match.
func (d *Decoder) Chunk(chunk []byte, n int, bad *XDRError) []byte {
	if d.Err != nil {
		return nil
	}
	data, ok := ChunkData(chunk, uint32(n))
	if !ok {
		d.Fail(bad)
	}
	return data
}

// Done returns the offset consumed, or the first error.
func (d *Decoder) Done() (int, error) {
	if d.Err != nil {
		return 0, d.Err
	}
	return d.Off, nil
}
