package rpcrdma

import (
	"errors"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/datapath/soft"
)

// A shared sink pool registers segments of 4, then doubling, never beyond max, and hands
// back the most recently returned buffer first.
func TestSinksGrowBySegments(t *testing.T) {
	dev, err := soft.New(soft.Config{}).Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	s := newSinks(dev, datapath.AccessLocalWrite, 4096, 10)
	var segs []int // buffers made after each registration
	for k := range 10 {
		if s.get() == nil {
			t.Fatalf("no buffer after %d of 10", k)
		}
		if len(segs) < len(s.segs) {
			segs = append(segs, s.made)
		}
	}
	if got := s.get(); got != nil {
		t.Fatal("an eleventh buffer beyond max 10")
	}
	if want := []int{4, 8, 10}; len(segs) != 3 || segs[0] != want[0] || segs[1] != want[1] || segs[2] != want[2] {
		t.Fatalf("buffers made after each registration %v, want %v", segs, want)
	}
	if err := s.close(); err == nil {
		t.Fatal("close with every buffer still held reported nothing")
	}
}

func TestSinksLastInFirstOut(t *testing.T) {
	dev, err := soft.New(soft.Config{}).Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	s := newSinks(dev, datapath.AccessLocalWrite, 4096, 8)
	a, b := s.get(), s.get()
	s.put(a)
	s.put(b)
	if got := s.get(); got != b {
		t.Fatal("the buffer put back last did not come first")
	}
	s.put(b)
	if err := s.close(); err != nil {
		t.Fatal(err)
	}
}

type failingRegistrar struct{}

var errNoMem = errors.New("cannot allocate memory")

func (failingRegistrar) Register([]byte, datapath.Access) (datapath.MR, error) { return nil, errNoMem }

// A registration that fails leaves the pool empty with the cause kept, for the call that
// found nothing to fail with it rather than wait for ever.
func TestSinksRegistrationFailure(t *testing.T) {
	s := newSinks(failingRegistrar{}, datapath.AccessLocalWrite, 4096, 8)
	if b := s.get(); b != nil || s.made != 0 || !errors.Is(s.err, errNoMem) {
		t.Fatalf("get %v, made %d, err %v; want nothing, 0, the registration's error", b, s.made, s.err)
	}
}
