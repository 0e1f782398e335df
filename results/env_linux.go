package results

import (
	"syscall"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

func uname() (release, version string) {
	var u syscall.Utsname
	if syscall.Uname(&u) != nil {
		return "", ""
	}
	return utsString(u.Release[:]), utsString(u.Version[:])
}

// utsString converts a NUL-terminated utsname field (int8 or uint8 by architecture).
func utsString[T int8 | uint8](f []T) string {
	b := make([]byte, 0, len(f))
	for _, c := range f {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	return string(b)
}

func rusage() (user, sys time.Duration, err error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0, &datapath.OpError{Op: "getrusage", Err: err}
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano()), nil
}
