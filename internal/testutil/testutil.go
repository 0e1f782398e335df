// Package testutil holds helpers shared by the tests of several packages.
package testutil

import (
	"encoding/hex"
	"strings"
	"testing"
)

// Unhex turns "12345678 00000001 ..." into bytes; white space is for reading only. It fails
// the test on anything that is not hex.
func Unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
