package soft

// SetClock replaces the slowdown's clock until the returned function restores it.
func SetClock(now func() int64) (restore func()) {
	saved := nanotime
	nanotime = now
	return func() { nanotime = saved }
}
