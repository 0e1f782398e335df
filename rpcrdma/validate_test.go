package rpcrdma

import (
	"errors"
	"testing"
)

// Validate takes zero fields as their defaults and names the first unusable field.
func TestConfigValidateNamesTheField(t *testing.T) {
	if err := (Config{}).Validate(); err != nil {
		t.Fatalf("zero Config: %v", err)
	}
	for _, tc := range []struct {
		c     Config
		field string
	}{
		{Config{Credits: -1}, "Credits"},
		{Config{Credits: 8193}, "Credits"},
		{Config{SendSize: 1500}, "SendSize"},
		{Config{RecvSize: 512 << 10}, "RecvSize"},
		{Config{Memory: MemoryWindows + 1}, "Memory"},
	} {
		var ce *ConfigError
		if err := tc.c.Validate(); !errors.As(err, &ce) || ce.Field != tc.field {
			t.Errorf("%+v: %v, want a ConfigError for %s", tc.c, err, tc.field)
		}
	}
}
