package datapath

import "testing"

func TestFormatCPUs(t *testing.T) {
	if got := FormatCPUs([]int{0, 1, 2, 3, 6, 8, 9}); got != "0-3,6,8-9" {
		t.Fatalf("got %q", got)
	}
}
