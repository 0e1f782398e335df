package plots

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

// TestExamples writes every chart of the synthetic runs, and of the odd ones, as PNG under
// $PLOTS_OUT for a person to look at:
//
//	PLOTS_OUT=/tmp/plots go test ./plots -run TestExamples
func TestExamples(t *testing.T) {
	dir := os.Getenv("PLOTS_OUT")
	if dir == "" {
		t.Skip("set PLOTS_OUT=dir to write example charts")
	}
	s, x := testRuns(t)
	wide := soft
	wide.Thresholds = []int{1024, 2048, 4096, 8192, 16384}
	wide.Sizes = nil
	for n := 16; n <= 1<<20; n *= 2 {
		wide.Sizes = append(wide.Sizes, n)
	}
	wide.Time = 20 * time.Millisecond
	w := wide.Run(t)
	for name, runs := range map[string][]*results.Run{"soft": {s}, "two-runs": {s, x}, "wide": {w}, "wide-twice": {w, w},
		"rounds": {roundsRun(t)}, "mix-rounds": {mixRounds(t)}} {
		paths, err := Render(runs, filepath.Join(dir, name), "png")
		t.Log(name, paths, err)
	}
	for name, r := range odd(t) {
		paths, err := Render([]*results.Run{r}, filepath.Join(dir, strings.ReplaceAll(name, " ", "_")), "png")
		t.Log(name, paths, err)
	}
}
