package plots

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	for name, runs := range map[string][]*results.Run{"soft": {s}, "two-runs": {s, x}} {
		paths, err := Render(runs, filepath.Join(dir, name), "png")
		t.Log(name, paths, err)
	}
	for name, r := range odd(t) {
		paths, err := Render([]*results.Run{r}, filepath.Join(dir, strings.ReplaceAll(name, " ", "_")), "png")
		t.Log(name, paths, err)
	}
}
