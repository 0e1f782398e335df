package oncrpc

import (
	"bytes"
	"testing"
)

func TestDecoder(t *testing.T) {
	trunc := NewXDRError("item", ErrTruncated)
	bad := NewXDRError("item.flag", ErrBadEnum)
	long := NewXDRError("item.data", ErrTooLong)
	// uint32 7; hyper 1<<32; bool TRUE; opaque "abcde" with its 3 pad bytes (content ignored).
	in := []byte{0, 0, 0, 7, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 5, 'a', 'b', 'c', 'd', 'e', 9, 9, 9}
	d := Decoder{B: in, Trunc: trunc}
	if d.Uint32() != 7 || d.Uint64() != 1<<32 || !d.Bool(bad) || !bytes.Equal(d.Opaque(5, long), []byte("abcde")) {
		t.Fatalf("decoded wrong: %v", d.Err)
	}
	if n, err := d.Done(); err != nil || n != len(in) {
		t.Fatalf("Done %d %v", n, err)
	}
	if d := (Decoder{B: in, Trunc: trunc}); d.Enum(7, bad) != 7 || d.Err != nil {
		t.Fatalf("enum at its last value: %v", d.Err)
	}
	if p := d.Chunk(in[20:27], 5, long); string(p) != "abcde" || d.Err != nil {
		t.Fatalf("chunk with part of its pad: %q %v", p, d.Err)
	}
	two := []byte{0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 2}
	tests := []struct {
		name string
		in   []byte
		f    func(d *Decoder)
		want *XDRError
	}{
		{"missing pad", in[:len(in)-1], func(d *Decoder) { d.Take(16); d.Opaque(5, long) }, trunc},
		{"bool 2", two, func(d *Decoder) { d.Uint64(); d.Bool(bad) }, bad},
		{"enum past last", two, func(d *Decoder) { d.Enum(1, bad) }, bad},
		{"too long", in, func(d *Decoder) { d.Take(16); d.Opaque(4, long) }, long},
		{"sticky", two, func(d *Decoder) { d.Bool(bad); d.Take(100); d.Uint32() }, bad},
		{"negative take", in, func(d *Decoder) { d.Take(-4) }, trunc},
		{"chunk length", in, func(d *Decoder) { d.Chunk(make([]byte, 9), 5, long) }, long},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Decoder{B: tt.in, Trunc: trunc}
			tt.f(&d)
			if n, err := d.Done(); err != tt.want || n != 0 || d.Uint32() != 0 {
				t.Fatalf("Done %d %v, want %v", n, err, tt.want)
			}
		})
	}
}
