package results_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

// Metric names parse as Metric.String writes them, p999 standing for p99.9; a bad one is named.
func TestParseMetrics(t *testing.T) {
	got, err := results.ParseMetrics("p50, p999,rps")
	if want := []results.Metric{results.MetricP50, results.MetricP999, results.MetricRPS}; err != nil || !slices.Equal(got, want) {
		t.Fatalf("got %v, %v; want %v", got, err, want)
	}
	if _, err := results.ParseMetrics("p50,p42"); err == nil || !strings.Contains(err.Error(), `unknown metric "p42"`) {
		t.Fatalf("p42: %v", err)
	}
}
