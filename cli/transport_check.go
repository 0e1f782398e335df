package cli

import (
	"errors"
	"fmt"

	"github.com/rpcrdma-bench/rpcrdma-bench/engine"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma"
)

// CheckCredits is the engine's check of a --credits value (rpcrdma.Config.Validate); 0 is
// the default and always passes.
func CheckCredits(n int) error {
	var ce *rpcrdma.ConfigError
	if err := (rpcrdma.Config{Credits: n}).Validate(); errors.As(err, &ce) {
		return fmt.Errorf("--credits %d out of range: %s, or 0 for the default", n, ce.Reason)
	}
	return nil
}

// ValidateTransport reports knob combinations that cannot mean what they say, naming the flags that
// set them; requester selects the requester's rules (run, client, sweep) over the server's.
func ValidateTransport(t *engine.Transport, requester bool) error {
	if err := CheckCredits(t.Credits); err != nil {
		return err
	}
	if requester && t.RemoteInvalidate && t.Memory != rpcrdma.MemoryWindows {
		// The engine would silently clear the bit: in pre-registered mode every chunk shares
		// the connection's key, and invalidating it would end the connection.
		return errors.New("--remote-invalidate needs --memory windows: pre-registered chunks share the connection's key, which a Send With Invalidate would destroy")
	}
	if requester && t.DoneInvalidate && !t.RemoteInvalidate {
		return errors.New("--done-invalidate needs --remote-invalidate: Send With Invalidate is used only when both ends set the R bit")
	}
	return nil
}
