package results

import "testing"

// A mix's warnings name it without the 0/0 B its params hold for "sizes vary".
func TestPointLabelOfMix(t *testing.T) {
	p := Point{Params: Params{Procedure: "MIX:nfs-like", InlineThreshold: 4096, Depth: 16, Connections: 1}}
	if got, want := pointLabel(&p), "MIX:nfs-like mixed sizes, threshold 4096, depth 16 × 1 connection(s)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	p.Params = Params{Procedure: "ECHO", CallBytes: 64, ReplyBytes: 64, InlineThreshold: 4096, Depth: 1, Connections: 1}
	if got, want := pointLabel(&p), "ECHO 64/64 B, threshold 4096, depth 1 × 1 connection(s)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
