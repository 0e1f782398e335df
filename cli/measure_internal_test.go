package cli

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// runFlags is a single run's settings at the flags' defaults.
func runFlags() RunConfig {
	c := RunConfig{Command: "run", Duration: time.Second, Interval: time.Second, Given: map[string]bool{}}
	c.Workload.Depth, c.Workload.Pollers, c.Workload.Connections, c.Workload.Seed = 16, 1, 1, 1
	c.Judge.Alpha = 0.05
	return c
}

// Settings that cannot mean what they say are bad usage naming the setting's flag, found
// before anything is measured; a server address without a port takes NFS/RDMA's.
func TestPrepare(t *testing.T) {
	for _, tc := range []struct {
		set  func(c *RunConfig)
		want string
	}{
		{func(c *RunConfig) { c.Workload.Pollers = 0 }, "--pollers 0: want at least 1 poller thread"},
		{func(c *RunConfig) { c.Duration = 0 }, "--duration 0s: want a measured time above 0"},
		{func(c *RunConfig) { c.Thresholds = []int{1024, 4096} }, "--thresholds takes one value here (2 given)"},
		{func(c *RunConfig) { c.RoundsPerProcess = -1 }, "--rounds-per-process -1: want 0"},
		{func(c *RunConfig) { c.Judge.Reports = []string{"verdict.html"} }, "--report verdict.html: name a .json"},
		{func(c *RunConfig) { c.Judge.Reports = []string{"verdict.json"} }, "--report writes the judgement against a baseline: give --baseline too"},
		{func(c *RunConfig) { c.Given["metrics"] = true }, "--metrics judges against a baseline: give --baseline too"},
		{func(c *RunConfig) { c.Addr = "127.0.0.1:99999" }, `--addr "127.0.0.1:99999": port 99999 is not a number from 0 to 65535`},
		{func(c *RunConfig) { c.Sweep, c.Proc, c.Given["proc"] = true, "null", true }, "--proc null has no payload to sweep sizes of"},
	} {
		c := runFlags()
		tc.set(&c)
		_, err := c.Prepare(nil)
		var ue UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want a UsageError saying %q", c.Command, err, tc.want)
		}
	}
	// A recipe's --shuffle on a one-point measurement: a warning, and it runs.
	c := runFlags()
	c.Shuffle = true
	if m, err := c.Prepare(nil); err != nil || len(m.Warnings) != 1 || !strings.Contains(m.Warnings[0], "--shuffle orders the points of a round, and this measurement has one point") {
		t.Errorf("--shuffle on one point: %v, %+v", err, m)
	}
	c = runFlags()
	c.Addr = "192.0.2.1"
	m, err := c.Prepare(nil)
	if err != nil || c.Addr != "192.0.2.1:20049" || len(m.Points) != 1 || m.record.Addr != c.Addr {
		t.Fatalf("Prepare: %v, addr %q", err, c.Addr)
	}
}
