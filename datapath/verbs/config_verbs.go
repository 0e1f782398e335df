//go:build verbs && cgo

package verbs

func (c Config) inlineProbeMax() int {
	if c.InlineProbeMax <= 0 {
		return 1024
	}
	return c.InlineProbeMax
}

func (c Config) rnrRetry() int {
	switch {
	case c.RNRRetry == 0:
		return DefaultRNRRetry
	case c.RNRRetry < 0:
		return 0
	}
	return min(c.RNRRetry, 7)
}

func (c Config) minRNRTimer() int {
	if c.MinRNRTimer <= 0 {
		return DefaultMinRNRTimer
	}
	return min(c.MinRNRTimer, 31)
}
