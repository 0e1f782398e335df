package datapath

import (
	"errors"
	"testing"
)

func TestNextRKeyRotatesOnlyKeyByte(t *testing.T) {
	for _, tc := range []struct{ in, want uint32 }{
		{0x12345600, 0x12345601},
		{0x123456fe, 0x123456ff},
		{0x123456ff, 0x12345600}, // wraps inside the key byte, index bits untouched
	} {
		if got := NextRKey(tc.in); got != tc.want {
			t.Errorf("NextRKey(%#x) = %#x, want %#x", tc.in, got, tc.want)
		}
	}
}

func TestStatusErr(t *testing.T) {
	if StatusSuccess.Err() != nil {
		t.Fatal("success must map to nil")
	}
	var se *StatusError
	if err := StatusRemoteAccess.Err(); !errors.As(err, &se) || se.Status != StatusRemoteAccess {
		t.Fatalf("StatusRemoteAccess.Err() = %v", err)
	}
	if got := Status(200).Err(); got != StatusGeneral.Err() {
		t.Fatalf("unknown status maps to %v, want general", got)
	}
	if n := testing.AllocsPerRun(100, func() { _ = StatusFlushed.Err() }); n != 0 {
		t.Fatalf("Status.Err allocates %v times", n)
	}
	for s := StatusSuccess; s <= StatusGeneral; s++ {
		if s.String() == "unknown status" {
			t.Errorf("status %d has no name", s)
		}
	}
}

func TestOpErrorUnwrap(t *testing.T) {
	err := error(&OpError{Op: "rdma_connect", Err: ErrTimeout})
	if !errors.Is(err, ErrTimeout) || err.Error() != "rdma_connect: timed out" {
		t.Fatalf("got %v", err)
	}
}
