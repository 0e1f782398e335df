package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

// The README and the schema's own page state the schema version the build writes.
func TestDocsStateTheSchemaVersion(t *testing.T) {
	re := regexp.MustCompile("`schema_version`(?: \\(integer\\))?(?: is)? ([0-9]+)")
	for _, name := range []string{"README.md", "results/SCHEMA.md"} {
		b, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		m := re.FindSubmatch(b)
		if m == nil {
			t.Errorf("%s states no schema_version", name)
			continue
		}
		if v, _ := strconv.Atoi(string(m[1])); v != results.SchemaVersion {
			t.Errorf("%s says schema_version %d; the build writes %d", name, v, results.SchemaVersion)
		}
	}
}
