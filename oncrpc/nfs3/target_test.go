package nfs3

import (
	"strings"
	"testing"
)

func TestTargetParseExport(t *testing.T) {
	for _, tc := range []struct {
		t          Target
		host, path string
		err        string
	}{
		{Target{Addr: "10.0.2.15:20049"}, "10.0.2.15", "/", ""},
		{Target{Addr: "10.0.2.15:20049", Export: "nfs.example:/srv/x"}, "nfs.example", "/srv/x", ""},
		{Target{Addr: "10.0.2.15:20049", Export: "nocolon"}, "", "", `export "nocolon": want HOST:/PATH`},
		{Target{Addr: "10.0.2.15:20049", Export: "h:relative"}, "", "", "want HOST:/PATH"},
		{Target{Addr: "noport"}, "", "", `server address "noport"`},
	} {
		h, p, err := tc.t.ParseExport()
		if h != tc.host || p != tc.path || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%+v: %q %q %v; want %q %q %q", tc.t, h, p, err, tc.host, tc.path, tc.err)
		}
	}
}
