package session

import (
	"strings"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma"
)

func TestTransportValidate(t *testing.T) {
	for _, c := range []struct {
		t         Transport
		requester bool
		want      string
	}{
		{Transport{}, true, ""},
		{Transport{Credits: -1}, false, "--credits -1 out of range"},
		{Transport{RemoteInvalidate: true}, true, "--remote-invalidate needs --memory windows"},
		{Transport{RemoteInvalidate: true}, false, ""},
		{Transport{RemoteInvalidate: true, Memory: rpcrdma.MemoryWindows}, true, ""},
		{Transport{DoneInvalidate: true, Memory: rpcrdma.MemoryWindows}, true, "--done-invalidate needs --remote-invalidate"},
	} {
		err := c.t.Validate(c.requester)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v.Validate(%v) = %v, want %q", c.t, c.requester, err, c.want)
		}
	}
}
