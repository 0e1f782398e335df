package results

import (
	"bufio"
	"os"
	"runtime"
	"strings"
)

// CaptureEnvironment describes this machine and process. The caller fills in Provider,
// Device and Port. Facts it cannot read stay empty.
func CaptureEnvironment() Environment {
	e := Environment{
		OS:         runtime.GOOS,
		Arch:       runtime.GOARCH,
		NumCPU:     runtime.NumCPU(),
		GoVersion:  runtime.Version(),
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		CPUModel:   cpuModel("/proc/cpuinfo"),
	}
	e.Hostname, _ = os.Hostname()
	e.Kernel, e.KernelVersion = uname()
	return e
}

// cpuModel returns the first "model name" (x86) or "Model"/"CPU part" style line of a
// /proc/cpuinfo format file.
func cpuModel(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	var fallback string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "model name":
			return v
		case "Model", "cpu", "uarch":
			if fallback == "" {
				fallback = v
			}
		}
	}
	return fallback
}

// ReadCPU returns the CPU time the process has used so far; a point's CPU is the difference
// of two readings (CPU.Sub).
func ReadCPU() (CPU, error) {
	u, s, err := rusage()
	if err != nil {
		return CPU{}, err
	}
	return CPU{UserNs: int64(u), SysNs: int64(s)}, nil
}

// Sub returns c minus earlier.
func (c CPU) Sub(earlier CPU) CPU {
	return CPU{UserNs: c.UserNs - earlier.UserNs, SysNs: c.SysNs - earlier.SysNs}
}
