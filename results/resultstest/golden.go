package resultstest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// Golden compares got with testdata/name under the test's package directory. With update it
// first rewrites the file (creating testdata/), for a change that is intended.
func Golden(t testing.TB, name string, got []byte, update bool) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to create it)", err)
	}
	if bytes.Equal(got, want) {
		return
	}
	i := 0
	for i < min(len(got), len(want)) && got[i] == want[i] {
		i++
	}
	t.Errorf("%s differs from the golden file from line %d (%d bytes, want %d); run the test with -update if the change is intended\n got: %q\nwant: %q",
		name, 1+bytes.Count(got[:i], []byte("\n")), len(got), len(want), lineAt(got, i), lineAt(want, i))
}

// lineAt is the line of b that holds offset i, at most 200 bytes of it.
func lineAt(b []byte, i int) []byte {
	i = min(i, len(b))
	start := bytes.LastIndexByte(b[:i], '\n') + 1
	end := len(b)
	if k := bytes.IndexByte(b[i:], '\n'); k >= 0 {
		end = i + k
	}
	return b[start:min(end, start+200)]
}
