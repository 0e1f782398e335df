package engine

import (
	"os"
	"testing"
)

// TestMain runs the test binary as the scripted NFSv4.1 server of nfs4script_test.go when
// started as one (scriptEnv set), else the tests.
func TestMain(m *testing.M) {
	if spec := os.Getenv(scriptEnv); spec != "" {
		os.Exit(serveScript(spec))
	}
	os.Exit(m.Run())
}
