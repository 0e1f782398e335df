package wire

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/internal/testutil"
)

// knfsdPrivateData is what the Linux kernel NFS server sends in its accept, recorded in the VM
// (testdata/knfsd/README.md): version 1, no remote invalidation, 4 KiB each way.
var knfsdPrivateData = knfsdBytes("accept-private-data.hex")

// knfsdBytes reads one of the files of bytes recorded from knfsd (testdata/knfsd/README.md):
// space-separated hex.
func knfsdBytes(name string) []byte {
	s, err := os.ReadFile(filepath.Join("testdata", "knfsd", name))
	if err != nil {
		panic(err)
	}
	b, err := hex.DecodeString(strings.Join(strings.Fields(string(s)), ""))
	if err != nil {
		panic(fmt.Sprintf("testdata/knfsd/%s: %v", name, err))
	}
	return b
}

func TestFindKnfsdPrivateData(t *testing.T) {
	want := PrivateData{Version: 1, SendSize: 4096, RecvSize: 4096}
	for _, off := range []int{-1, 0, 1, 3, 7, 188} {
		in := knfsdPrivateData
		if off >= 0 {
			// rxe hands over 196 bytes, zero padded; other layers may put data first.
			in = make([]byte, 196)
			copy(in[off:], knfsdPrivateData)
		}
		got, ok := FindPrivateData(in)
		if !ok || got != want {
			t.Errorf("offset %d: FindPrivateData = %+v, %v; want %+v", off, got, ok, want)
		}
	}
	var b [PrivateDataSize]byte
	if n, err := want.Encode(b[:]); err != nil || n != 8 || !bytes.Equal(b[:], knfsdPrivateData) {
		t.Errorf("Encode(%+v) = %d, %v, %x; want knfsd's %x", want, n, err, b, knfsdPrivateData)
	}
}

func TestPrivateDataExact(t *testing.T) {
	cases := []struct {
		pd  PrivateData
		hex string
	}{
		{PrivateData{SendSize: 1024, RecvSize: 1024}, "f6ab0e18 01 00 00 00"},
		{PrivateData{Version: 1, RemoteInvalidate: true, SendSize: 262144, RecvSize: 8192}, "f6ab0e18 01 01 ff 07"},
		{PrivateData{RemoteInvalidate: true, SendSize: 4096, RecvSize: 65536}, "f6ab0e18 01 01 03 3f"},
	}
	for _, c := range cases {
		want := testutil.Unhex(t, c.hex)
		var b [8]byte
		if _, err := c.pd.Encode(b[:]); err != nil || !bytes.Equal(b[:], want) {
			t.Errorf("Encode(%+v) = %x, %v; want %x", c.pd, b, err, want)
		}
	}
}

func TestFindPrivateDataRejects(t *testing.T) {
	cases := map[string][]byte{
		"empty":             nil,
		"zeros":             make([]byte, 196),
		"truncated at end":  append(make([]byte, 10), 0xf6, 0xab, 0x0e, 0x18, 0x01, 0x00, 0x03),
		"version 2":         {0xf6, 0xab, 0x0e, 0x18, 0x02, 0x00, 0x03, 0x03},
		"version 0":         {0xf6, 0xab, 0x0e, 0x18, 0x00, 0x00, 0x03, 0x03, 0, 0},
		"wrong magic":       {0xf6, 0xab, 0x0e, 0x19, 0x01, 0x00, 0x03, 0x03},
		"little-endian tag": {0x18, 0x0e, 0xab, 0xf6, 0x01, 0x00, 0x03, 0x03},
	}
	for name, in := range cases {
		got, ok := FindPrivateData(in)
		if ok || got != DefaultPrivateData {
			t.Errorf("%s: FindPrivateData = %+v, %v; want defaults, false", name, got, ok)
		}
	}
	if DefaultPrivateData.SendSize != 1024 || DefaultPrivateData.RecvSize != 1024 || DefaultPrivateData.RemoteInvalidate {
		t.Errorf("DefaultPrivateData = %+v, want 1024/1024 without remote invalidation (RFC 8797 5.1)", DefaultPrivateData)
	}

	// A bad candidate does not hide a good one after it, even an overlapping one.
	in := []byte{0xf6, 0xab, 0x0e, 0x18, 0x09, 0xf6, 0xab, 0x0e, 0x18, 0x01, 0xfe, 0x00, 0x01, 0}
	got, ok := FindPrivateData(in)
	if want := (PrivateData{Version: 1, SendSize: 1024, RecvSize: 2048}); !ok || got != want {
		t.Errorf("after a version 9 candidate: %+v, %v; want %+v", got, ok, want)
	}
	// Reserved flag bits are ignored; only bit 0 means remote invalidation.
	got, _ = FindPrivateData([]byte{0xf6, 0xab, 0x0e, 0x18, 0x01, 0xfe, 0, 0})
	if got.RemoteInvalidate {
		t.Error("reserved bits read as remote invalidation")
	}
}

func TestPrivateDataEncodeErrors(t *testing.T) {
	var b [8]byte
	bad := []PrivateData{
		{SendSize: 0, RecvSize: 1024},
		{SendSize: 1024, RecvSize: 1000},
		{SendSize: 1536, RecvSize: 1024},
		{SendSize: 263168, RecvSize: 1024},
		{SendSize: -1024, RecvSize: 1024},
		{Version: 2, SendSize: 1024, RecvSize: 1024},
	}
	for _, pd := range bad {
		if n, err := pd.Encode(b[:]); err == nil || n != 0 || !errors.Is(err, ErrPrivateData) {
			t.Errorf("Encode(%+v) = %d, %v; want an ErrPrivateData", pd, n, err)
		}
	}
	if _, err := DefaultPrivateData.Encode(b[:7]); !errors.Is(err, ErrPrivateData) {
		t.Errorf("7-byte buffer: %v", err)
	}
}

func TestPrivateDataRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	buf := make([]byte, 64)
	for range 1000 {
		pd := PrivateData{
			Version:          1,
			RemoteInvalidate: r.IntN(2) == 1,
			SendSize:         (1 + r.IntN(256)) * 1024,
			RecvSize:         (1 + r.IntN(256)) * 1024,
		}
		for i := range buf {
			buf[i] = byte(r.IntN(256))
		}
		buf[0] = 0 // no stray format identifier before ours (0xf6 never starts at 0)
		off := 1 + r.IntN(len(buf)-PrivateDataSize)
		copy(buf[:off], make([]byte, off))
		if _, err := pd.Encode(buf[off:]); err != nil {
			t.Fatal(err)
		}
		got, ok := FindPrivateData(buf)
		if !ok || got != pd {
			t.Fatalf("offset %d: %+v -> %+v, %v", off, pd, got, ok)
		}
	}
}

func TestNegotiate(t *testing.T) {
	client := PrivateData{Version: 1, RemoteInvalidate: true, SendSize: 8192, RecvSize: 16384}
	knfsd, _ := FindPrivateData(knfsdPrivateData)
	cases := []struct {
		name      string
		own, peer PrivateData
		want      Inline
	}{
		// Linux's server offers 4 KiB each way and no remote invalidation.
		{"client vs knfsd", client, knfsd, Inline{SendSize: 4096, RecvSize: 4096}},
		{"knfsd vs client", knfsd, client, Inline{SendSize: 4096, RecvSize: 4096}},
		// A peer without private data is a 1024/1024 peer (RFC 8797 section 5.1).
		{"client vs legacy", client, DefaultPrivateData, Inline{SendSize: 1024, RecvSize: 1024}},
		{"asymmetric", client, PrivateData{Version: 1, RemoteInvalidate: true, SendSize: 65536, RecvSize: 4096},
			Inline{SendSize: 4096, RecvSize: 16384, RemoteInvalidate: true}},
		{"one side without R", client, PrivateData{Version: 1, SendSize: 262144, RecvSize: 262144},
			Inline{SendSize: 8192, RecvSize: 16384}},
	}
	for _, c := range cases {
		if got := Negotiate(c.own, c.peer); got != c.want {
			t.Errorf("%s: Negotiate = %+v, want %+v", c.name, got, c.want)
		}
		// Each direction agrees on its threshold: what one side may send, the other expects.
		a, b := Negotiate(c.own, c.peer), Negotiate(c.peer, c.own)
		if a.SendSize != b.RecvSize || a.RecvSize != b.SendSize || a.RemoteInvalidate != b.RemoteInvalidate {
			t.Errorf("%s: sides disagree: %+v vs %+v", c.name, a, b)
		}
	}
}
