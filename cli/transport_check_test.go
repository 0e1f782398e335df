package cli

import (
	"strings"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/engine"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma"
)

func TestTransportValidate(t *testing.T) {
	for _, c := range []struct {
		t         engine.Transport
		requester bool
		want      string
	}{
		{engine.Transport{}, true, ""},
		{engine.Transport{Credits: -1}, false, "--credits -1 out of range"},
		{engine.Transport{RemoteInvalidate: true}, true, "--remote-invalidate needs --memory windows"},
		{engine.Transport{RemoteInvalidate: true}, false, ""},
		{engine.Transport{RemoteInvalidate: true, Memory: rpcrdma.MemoryWindows}, true, ""},
		{engine.Transport{DoneInvalidate: true, Memory: rpcrdma.MemoryWindows}, true, "--done-invalidate needs --remote-invalidate"},
	} {
		err := ValidateTransport(&c.t, c.requester)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v.Validate(%v) = %v, want %q", c.t, c.requester, err, c.want)
		}
	}
}
