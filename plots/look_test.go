package plots

import (
	"os"
	"strings"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

func TestLook(t *testing.T) {
	dir := os.Getenv("PLOTS_OUT")
	if dir == "" {
		t.Skip("PLOTS_OUT not set")
	}
	s, x := testRuns(t)
	paths, err := Render([]*results.Run{s, x}, dir+"/multi", "png")
	t.Log(paths, err)
	for name, r := range odd(t) {
		paths, err := Render([]*results.Run{r}, dir+"/"+strings.ReplaceAll(name, " ", "_"), "png")
		t.Log(name, paths, err)
	}
}
