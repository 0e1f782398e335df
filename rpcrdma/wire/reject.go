package wire

import (
	"encoding/binary"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

// The reject reason block: how this program's server says why it refused a connection, in
// the private data of the CM reject. RFC 8797 defines no reject private data, so the block
// is this program's own (rpcrdma/TRANSPORT.md, Refusals):
//
//	offset size field
//	0      4    identifier 0x72726221 ("rrb!"), unregistered (RFC 8797 section 8)
//	4      1    version, 1
//	5      1    flags: bit 0 = the text was cut to fit; the others are sent as zero
//	6      1    n, the length of the text, at most MaxRejectReason
//	7      n    the reason, UTF-8
//
// Seven bytes and at most 141 of text fit IB's REJ private data (148 bytes), the smallest
// of the transports' limits. The text is cut at a character boundary.
const (
	rejectFormat  uint32 = 0x72726221
	rejectVersion        = 1
	rejectHdr            = 7
	rejectCut            = 1 << 0

	// MaxRejectReason is the most text a reject reason block carries, in bytes.
	MaxRejectReason = datapath.MaxRejectPrivateData - rejectHdr
)

// EncodeRejectReason returns reject private data carrying reason: invalid UTF-8 becomes
// U+FFFD, and a text longer than MaxRejectReason is cut at a character boundary and flagged.
func EncodeRejectReason(reason string) []byte {
	reason = strings.ToValidUTF8(reason, "\uFFFD")
	var flags byte
	if len(reason) > MaxRejectReason {
		n := MaxRejectReason
		for n > 0 && !utf8.RuneStart(reason[n]) {
			n--
		}
		reason, flags = reason[:n], rejectCut
	}
	b := make([]byte, rejectHdr, rejectHdr+len(reason))
	binary.BigEndian.PutUint32(b, rejectFormat)
	b[4], b[5], b[6] = rejectVersion, flags, byte(len(reason))
	return append(b, reason...)
}

// RejectReason is a reject reason block as decoded.
type RejectReason struct {
	// Text is the sender's reason, with every character that is not printable (controls,
	// invalid UTF-8) replaced by '?', as it ends up on a terminal.
	Text string
	// Cut: the sender cut the text to fit; its log has the whole of it.
	Cut bool
}

// DecodeRejectReason searches b, a reject's private data as received (possibly padded, or
// with other layers' data before it), for a reject reason block: the identifier, version 1
// and a length that fits in b. A candidate that is not one is skipped. It reports false when
// b holds none.
func DecodeRejectReason(b []byte) (RejectReason, bool) {
	for i := 0; i+rejectHdr <= len(b); i++ {
		if binary.BigEndian.Uint32(b[i:]) != rejectFormat || b[i+4] != rejectVersion {
			continue
		}
		n := int(b[i+6])
		if n > MaxRejectReason || i+rejectHdr+n > len(b) {
			continue
		}
		return RejectReason{Text: printable(b[i+rejectHdr : i+rejectHdr+n]), Cut: b[i+5]&rejectCut != 0}, true
	}
	return RejectReason{}, false
}

// printable is b as text with every non-printable character (and each byte of invalid
// UTF-8) replaced by '?'.
func printable(b []byte) string {
	var s strings.Builder
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n <= 1 || !unicode.IsPrint(r) {
			r = '?'
		}
		s.WriteRune(r)
		b = b[n:]
	}
	return s.String()
}
