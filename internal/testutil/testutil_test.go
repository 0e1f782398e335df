package testutil

import (
	"bytes"
	"testing"
)

func TestUnhex(t *testing.T) {
	if got := Unhex(t, "1234 abcd\n\t00"); !bytes.Equal(got, []byte{0x12, 0x34, 0xab, 0xcd, 0}) {
		t.Fatalf("Unhex = %x, want 1234abcd00", got)
	}
}
