package soft

import "testing"

func TestParseBandwidth(t *testing.T) {
	for in, want := range map[string]float64{"1Gbit": 1e9, "100Mbit/s": 1e8, "2.5e9": 2.5e9, "500kbps": 5e5, " 3Tb ": 3e12} {
		if got, err := ParseBandwidth(in); err != nil || got != want {
			t.Errorf("ParseBandwidth(%q) = %g, %v; want %g", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1Gbit", "fast", "2000T"} {
		if got, err := ParseBandwidth(in); err == nil {
			t.Errorf("ParseBandwidth(%q) = %g, want an error", in, got)
		}
	}
}
