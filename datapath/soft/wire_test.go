package soft

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

func TestHeaderBytes(t *testing.T) {
	h := header{typ: frameWrite, flags: 0, seq: 0x01020304, addr: 0x1122334455667788, rkey: 0xa1b2c3d4, len: 0x10000}
	var b [headerLen]byte
	h.put(b[:])
	want, _ := hex.DecodeString("05000000" + "01020304" + "1122334455667788" + "a1b2c3d4" + "00010000")
	if !bytes.Equal(b[:], want) {
		t.Fatalf("header bytes %x, want %x", b, want)
	}
	var got header
	if err := got.parse(want); err != nil || got != h {
		t.Fatalf("parse = %+v, %v", got, err)
	}
}

func TestHeaderRejects(t *testing.T) {
	for _, tc := range []struct {
		hex  string
		want error
	}{
		{"000000000000000000000000000000000000000000000000", errFrameType},
		{"0b0000000000000000000000000000000000000000000000", errFrameType},
		{"040001000000000000000000000000000000000000000000", errFrameReserved},
		{"040000010000000000000000000000000000000000000000", errFrameReserved},
		{"0400000000000000000000000000000000000000" + "80000001", errFrameLength},
		{"0800000000000000000000000000000000000000" + "00000001", errFrameAckLength},
		{"0900000000000000000000000000000000000000" + "00000018", errFrameAckLength},
	} {
		b, _ := hex.DecodeString(tc.hex)
		var h header
		if err := h.parse(b); !errors.Is(err, tc.want) {
			t.Errorf("parse(%s) = %v, want %v", tc.hex, err, tc.want)
		}
	}
}

func TestHeaderRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		h := header{typ: uint8(1 + r.IntN(frameDisconnect)), flags: uint8(r.Uint32()), seq: r.Uint32(),
			addr: r.Uint64(), rkey: r.Uint32(), len: uint32(r.Int64N(maxFrame + 1))}
		if h.typ == frameAck || h.typ == frameNak {
			h.len = 0 // carry no payload
		}
		var b [headerLen]byte
		h.put(b[:])
		var got header
		if err := got.parse(b[:]); err != nil || got != h {
			t.Fatalf("round trip of %+v: %+v, %v", h, got, err)
		}
	}
}

func TestHelloBytes(t *testing.T) {
	m := hello{maxSendWR: 128, maxRecvWR: 0x1234, pd: []byte{0xaa, 0xbb}}
	b := m.bytes(4)
	want, _ := hex.DecodeString("53524d41" + "02000000" + "00000080" + "00001234" + "aabb0000")
	if !bytes.Equal(b, want) {
		t.Fatalf("hello bytes %x, want %x", b, want)
	}
	got, err := parseHello(b, 4)
	if err != nil || got.maxSendWR != 128 || got.maxRecvWR != 0x1234 || !bytes.Equal(got.pd, []byte{0xaa, 0xbb, 0, 0}) {
		t.Fatalf("parseHello = %+v, %v", got, err)
	}
	for _, tc := range []struct {
		hex  string
		want error
	}{
		{"53524d410200000000000080000012", errHelloLength},
		{"53524d400200000000000080000012340000", errHelloMagic},
		{"53524d410100000000000080000012340000", errHelloVersion}, // version 1: per-request ACKs
		{"53524d410300000000000080000012340000", errHelloVersion},
		{"53524d410200000000000000000012340000", errHelloQueues},
		{"53524d410200000000004001000012340000", errHelloQueues},
	} {
		b, _ := hex.DecodeString(tc.hex)
		if _, err := parseHello(b, 2); !errors.Is(err, tc.want) {
			t.Errorf("parseHello(%s) = %v, want %v", tc.hex, err, tc.want)
		}
	}
}

func FuzzHeader(f *testing.F) {
	f.Add(make([]byte, headerLen))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < headerLen {
			return
		}
		var h header
		if h.parse(b) != nil {
			return
		}
		var out [headerLen]byte
		h.put(out[:])
		if !bytes.Equal(out[:], b[:headerLen]) {
			t.Fatalf("parse then put changed %x into %x", b[:headerLen], out)
		}
	})
}

func FuzzHello(f *testing.F) {
	f.Add((&hello{maxSendWR: 1, maxRecvWR: 1}).bytes(datapath.MaxConnectPrivateData))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := parseHello(b, datapath.MaxConnectPrivateData)
		if err != nil {
			return
		}
		if out := m.bytes(datapath.MaxConnectPrivateData); !bytes.Equal(out[:4], b[:4]) || !bytes.Equal(out[8:], b[8:]) {
			t.Fatalf("parse then encode changed %x into %x", b, out)
		}
	})
}

// FuzzStream feeds arbitrary frames to an established connection's reader, as a hostile or
// broken peer would send them: nothing may panic, and nothing outside the registered region
// may change. The region's address and key are fixed, so the corpus can aim at it.
func FuzzStream(f *testing.F) {
	frame := func(h header, payload []byte) []byte {
		b := make([]byte, headerLen)
		h.put(b)
		return append(b, payload...)
	}
	f.Add(frame(header{typ: frameWrite, addr: fuzzBase + 8, rkey: fuzzKey, len: 4}, []byte("abcd")))
	f.Add(frame(header{typ: frameWrite, addr: fuzzBase + 4000, rkey: fuzzKey, len: 200}, make([]byte, 200)))
	f.Add(frame(header{typ: frameReadReq, addr: fuzzBase, rkey: fuzzKey, len: 4096}, nil))
	f.Add(frame(header{typ: frameSend, len: 3}, []byte("xyz")))
	f.Add(frame(header{typ: frameAck, seq: 7}, nil))
	f.Add(frame(header{typ: frameSend, flags: flagInvalidate, rkey: fuzzKey, len: 1}, []byte("!")))
	reason := []byte("soft wire: reserved header bytes not zero")
	f.Add(frame(header{typ: frameDisconnect, flags: uint8(datapath.StatusRetryExceeded), len: uint32(len(reason))}, reason))
	f.Fuzz(func(t *testing.T, in []byte) {
		fuzzStream(t, in)
	})
}

// TestStreamWriteLands checks the fuzz harness itself: a well-formed WRITE reaches the
// region.
func TestStreamWriteLands(t *testing.T) {
	b := make([]byte, headerLen)
	(&header{typ: frameWrite, addr: fuzzBase + 8, rkey: fuzzKey, len: 4}).put(b)
	region := fuzzStream(t, append(b, "abcd"...))
	if string(region[8:12]) != "abcd" {
		t.Fatalf("WRITE did not land: %q", region[:16])
	}
}

// The corpus names the region as fuzzBase+offset with key fuzzKey; rebase maps them to the
// region's real address and key.
const (
	fuzzBase = 1 << 20
	fuzzKey  = 0x5eed
)

// fuzzStream runs in through a connection's reader and returns a copy of the region.
func fuzzStream(t *testing.T, in []byte) []byte {
	page := syscall.Getpagesize()
	mapping, err := syscall.Mmap(-1, 0, 3*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(mapping)
	for i := range mapping {
		mapping[i] = 0x5a
	}
	d, _ := New(Config{RNRTimeout: -1}).Open("")
	dev := d.(*device)
	mem := mapping[page : 2*page]
	m, err := dev.Register(mem, datapath.AccessLocalWrite|datapath.AccessRemoteWrite|datapath.AccessRemoteRead)
	if err != nil {
		t.Fatal(err)
	}
	in = rebase(in, m.Addr(), m.RKey())
	cq, _ := dev.NewCQ(1024)
	c, err := newConn(dev, datapath.QPConfig{SendCQ: cq, RecvCQ: cq})
	if err != nil {
		t.Fatal(err)
	}
	c.PostRecv([]datapath.RecvWR{{ID: 1, SGL: []datapath.SGE{{Addr: m.Addr(), Length: 100, LKey: m.LKey()}}}})
	ours, theirs := net.Pipe()
	go io.Copy(io.Discard, theirs)
	c.counted(1)
	l := newLink(c, ours, bufio.NewReader(ours), 16)
	theirs.SetWriteDeadline(time.Now().Add(2 * time.Second))
	theirs.Write(in)
	theirs.Close()
	<-l.done
	c.Close()
	m.Close()
	cq.Close()
	for i, b := range mapping {
		if (i < page || i >= 2*page) && b != 0x5a {
			t.Fatalf("byte %d outside the region changed", i-page)
		}
	}
	return append([]byte(nil), mem...)
}

// rebase rewrites every header-sized window that parses as a WRITE or READ request so that
// addr is relative to fuzzBase and the key is the region's.
func rebase(in []byte, base uint64, key uint32) []byte {
	out := append([]byte(nil), in...)
	for off := 0; off+headerLen <= len(out); {
		var h header
		if h.parse(out[off:]) != nil {
			break
		}
		if h.typ == frameWrite || h.typ == frameReadReq || h.typ == frameSend {
			h.addr = h.addr - fuzzBase + base
			if h.rkey == fuzzKey {
				h.rkey = key
			}
			h.put(out[off:])
		}
		off += headerLen
		if h.hasPayload() {
			off += int(h.len)
		}
	}
	return out
}
