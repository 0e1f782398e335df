package benchprog

import (
	"encoding/binary"
	"math/bits"
)

// The payload pattern: the 8-byte little-endian word at byte offset 8w of a payload keyed by
// seed is mix(seed+patternStep) + w*patternStep (mod 2^64), where mix is the splitmix64
// finalizer, so the base is splitmix64's first output for that seed: nearby seeds give
// unrelated bases and no seed gives a zero word at offset 0. Every word of a payload differs
// from every other (patternStep is odd), so shifted, duplicated, stale or zeroed data fails
// the check at its first wrong word. One add per word keeps Fill and Verify at memory speed,
// and the rule is simple enough to reimplement in a C peer.
const (
	patternStep  uint64 = 0x9e3779b97f4a7c15
	patternStep2 uint64 = 0x3c6ef372fe94f82a // 2, 3 and 4 times patternStep, mod 2^64
	patternStep3 uint64 = 0xdaa66d2c7ddf743f
	patternStep4 uint64 = 0x78dde6e5fd29f054
)

// FileSeed is the seed of the content of a file prepared for READ verification (by NFSv3
// and NFSv4.1 alike): the pattern at every file offset.
const FileSeed = 0x6e667333 // "nfs3"

func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// Fill writes the pattern for seed into b, as the bytes at offsets off..off+len(b) of the
// payload: a payload split over several buffers is filled piece by piece with each piece's
// offset.
func Fill(b []byte, seed, off uint64) {
	base := mix(seed + patternStep)
	i := 0
	// Head: bytes up to the next 8-byte boundary of the payload offset.
	for ; i < len(b) && (off+uint64(i))&7 != 0; i++ {
		p := off + uint64(i)
		b[i] = byte((base + (p>>3)*patternStep) >> (8 * (p & 7)))
	}
	v := base + ((off+uint64(i))>>3)*patternStep
	// Reslicing (rather than indexing b[i+8:]) lets the compiler drop the bounds checks.
	w := b[i:]
	for len(w) >= 32 {
		binary.LittleEndian.PutUint64(w[0:8], v)
		binary.LittleEndian.PutUint64(w[8:16], v+patternStep)
		binary.LittleEndian.PutUint64(w[16:24], v+patternStep2)
		binary.LittleEndian.PutUint64(w[24:32], v+patternStep3)
		v += patternStep4
		w = w[32:]
	}
	for len(w) >= 8 {
		binary.LittleEndian.PutUint64(w[0:8], v)
		v += patternStep
		w = w[8:]
	}
	for k := range w {
		w[k] = byte(v >> (8 * k))
	}
}

// Verify checks b against the pattern for seed at payload offset off (as Fill wrote it) and
// returns the index in b of the first byte that differs, or -1 if all match.
func Verify(b []byte, seed, off uint64) int {
	base := mix(seed + patternStep)
	i := 0
	for ; i < len(b) && (off+uint64(i))&7 != 0; i++ {
		p := off + uint64(i)
		if b[i] != byte((base+(p>>3)*patternStep)>>(8*(p&7))) {
			return i
		}
	}
	v := base + ((off+uint64(i))>>3)*patternStep
	w := b[i:]
	for len(w) >= 32 {
		x0 := binary.LittleEndian.Uint64(w[0:8]) ^ v
		x1 := binary.LittleEndian.Uint64(w[8:16]) ^ (v + patternStep)
		x2 := binary.LittleEndian.Uint64(w[16:24]) ^ (v + patternStep2)
		x3 := binary.LittleEndian.Uint64(w[24:32]) ^ (v + patternStep3)
		if x0|x1|x2|x3 != 0 {
			break // the word loop below finds the byte
		}
		v += patternStep4
		w = w[32:]
	}
	for len(w) >= 8 {
		if x := binary.LittleEndian.Uint64(w[0:8]) ^ v; x != 0 {
			return len(b) - len(w) + bits.TrailingZeros64(x)/8
		}
		v += patternStep
		w = w[8:]
	}
	for k := range w {
		if w[k] != byte(v>>(8*k)) {
			return len(b) - len(w) + k
		}
	}
	return -1
}
