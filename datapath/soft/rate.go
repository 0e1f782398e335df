package soft

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseBandwidth reads a rate in bits per second: a number with an optional k, M, G or T
// (powers of 1000) and an optional "bit", "bit/s" or "bps": 1Gbit, 100Mbit/s, 2.5e9;
// Config.Bandwidth takes what it returns.
func ParseBandwidth(x string) (float64, error) {
	s := strings.TrimSpace(x)
	for _, unit := range []string{"bit/s", "bps", "bit", "b"} {
		if t, ok := strings.CutSuffix(s, unit); ok {
			s = t
			break
		}
	}
	mult := 1.0
	if n := len(s); n > 0 {
		if m, ok := map[byte]float64{'k': 1e3, 'K': 1e3, 'M': 1e6, 'G': 1e9, 'T': 1e12}[s[n-1]]; ok {
			s, mult = s[:n-1], m
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v > 0) || v*mult > 1e15 {
		return 0, fmt.Errorf("bad rate %q: want bits per second above 0, such as 1Gbit, 500Mbit or 2.5e9", x)
	}
	return v * mult, nil
}
