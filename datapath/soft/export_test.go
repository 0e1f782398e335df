package soft

// SetClock replaces the slowdown's clock until the returned function restores it.
func SetClock(now func() int64) (restore func()) {
	saved := nanotime
	nanotime = now
	return func() { nanotime = saved }
}

// PostSteps is the chain steps a provider of cfg spins per send queue work request.
func PostSteps(cfg Config) int {
	if s := New(cfg).slow; s != nil {
		return s.postSteps
	}
	return 0
}

// StepsPerNs is the machine's chain steps per nanosecond, as the post cost converts it.
func StepsPerNs() float64 { return stepsPerNs() }
