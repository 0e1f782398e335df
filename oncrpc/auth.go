package oncrpc

// MaxAuthBody is the largest credential or verifier body (opaque_auth body<400>, RFC 5531
// section 8.2).
const MaxAuthBody = 400

// OpaqueAuth is opaque_auth: a credential or verifier. Body is at most MaxAuthBody bytes;
// after a decode it is a sub-slice of the decoded buffer.
type OpaqueAuth struct {
	Flavor Flavor
	Body   []byte
}

// Size is the encoded size: flavor, length, body and pad.
func (a OpaqueAuth) Size() int { return 8 + pad4(len(a.Body)) }

// decodeAuth decodes an opaque_auth at off and returns the offset after it.
func decodeAuth(b []byte, off int, a *OpaqueAuth, trunc, tooLong *XDRError) (int, error) {
	if len(b)-off < 8 {
		return 0, trunc
	}
	flavor := Flavor(get32(b, off))
	n := get32(b, off+4)
	if n > MaxAuthBody {
		return 0, tooLong
	}
	off += 8
	end := off + pad4(int(n))
	if end > len(b) {
		return 0, trunc
	}
	a.Flavor = flavor
	a.Body = b[off : off+int(n) : off+int(n)]
	return end, nil
}

func encodeAuth(b []byte, off int, a *OpaqueAuth) int {
	put32(b, off, uint32(a.Flavor))
	put32(b, off+4, uint32(len(a.Body)))
	return putOpaque(b, off+8, a.Body)
}

// Limits of authsys_parms (RFC 5531 appendix A).
const (
	MaxMachineName = 255
	MaxGids        = 16
)

// SysCred is an AUTH_SYS credential body, authsys_parms (RFC 5531 appendix A). After
// DecodeSysCred, MachineName is a sub-slice of the decoded body.
type SysCred struct {
	Stamp       uint32
	MachineName []byte // at most MaxMachineName bytes
	UID, GID    uint32
	NGids       int // number of valid entries in Gids, 0..MaxGids
	Gids        [MaxGids]uint32
}

// Size is the encoded size of the body (not counting the opaque_auth flavor and length).
func (c *SysCred) Size() int { return 4 + 4 + pad4(len(c.MachineName)) + 8 + 4 + 4*c.NGids }

// Encode writes the body into b and returns its length. Use the result as the Body of an
// OpaqueAuth with FlavorSys. Errors: ErrTooLong (a limit above, or a body over MaxAuthBody),
// ErrShortBuffer.
func (c *SysCred) Encode(b []byte) (int, error) {
	if len(c.MachineName) > MaxMachineName {
		return 0, errSysMachineLong
	}
	if c.NGids < 0 || c.NGids > MaxGids {
		return 0, errSysGidsLong
	}
	size := c.Size()
	if size > MaxAuthBody {
		return 0, errSysTooLong
	}
	if len(b) < size {
		return 0, errSysShort
	}
	put32(b, 0, c.Stamp)
	put32(b, 4, uint32(len(c.MachineName)))
	off := putOpaque(b, 8, c.MachineName)
	put32(b, off, c.UID)
	put32(b, off+4, c.GID)
	put32(b, off+8, uint32(c.NGids))
	off += 12
	for _, g := range c.Gids[:c.NGids] {
		put32(b, off, g)
		off += 4
	}
	return off, nil
}

// DecodeSysCred decodes an AUTH_SYS credential body (the Body of an OpaqueAuth whose Flavor
// is FlavorSys) into c. Bytes after the gids are ignored: the opaque_auth length already
// bounded the body, and authsys_parms gives them no meaning. A body holding fewer bytes than
// it declares is ErrTruncated. Unused Gids entries are zeroed. On error c is unchanged.
func DecodeSysCred(body []byte, c *SysCred) error {
	if len(body) < 8 {
		return errSysTrunc
	}
	stamp := get32(body, 0)
	n := get32(body, 4)
	if n > MaxMachineName {
		return errSysMachineLong
	}
	off := 8 + pad4(int(n))
	if len(body)-off < 12 {
		return errSysTrunc
	}
	ngids := get32(body, off+8)
	if ngids > MaxGids {
		return errSysGidsLong
	}
	if len(body)-off-12 < 4*int(ngids) {
		return errSysTrunc
	}
	c.Stamp = stamp
	c.MachineName = body[8 : 8+n : 8+n]
	c.UID = get32(body, off)
	c.GID = get32(body, off+4)
	c.NGids = int(ngids)
	gids := body[off+12 : off+12+4*int(ngids)]
	for i := range c.NGids {
		c.Gids[i] = get32(gids, 4*i)
	}
	clear(c.Gids[c.NGids:])
	return nil
}
