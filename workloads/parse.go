package workloads

import (
	"errors"
	"fmt"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
	"math"
	"strconv"
	"strings"
)

// ParseError is a CLI string that did not parse: which kind of value, the whole input, the
// token that was wrong and why.
type ParseError struct {
	Kind  string // "size", "mix", "cpu list", ...
	Input string
	Token string
	Err   error
}

func (e *ParseError) Error() string {
	if e.Token == e.Input {
		return fmt.Sprintf("bad %s %q: %v", e.Kind, e.Token, e.Err)
	}
	return fmt.Sprintf("bad %s %q in %q: %v", e.Kind, e.Token, e.Input, e.Err)
}

func (e *ParseError) Unwrap() error { return e.Err }

var (
	errEmpty    = errors.New("empty")
	errNegative = errors.New("negative")
)

// ParseClass parses a message class: auto, short, chunked or long (any case); "inline" is
// accepted for short.
func ParseClass(s string) (rpcproto.Kind, error) {
	if strings.EqualFold(s, "inline") {
		return rpcproto.Short, nil
	}
	if k, err := rpcproto.ParseKind(strings.ToLower(s)); err == nil {
		return k, nil
	}
	return 0, &ParseError{Kind: "message class", Input: s, Token: s, Err: errors.New("want auto, short, chunked or long")}
}

// ParseSize parses a byte count: a decimal integer with an optional binary suffix k, m or g
// (also written kb/kib, any case): "64", "4k", "1m" = 1048576. It is at most MaxSize.
func ParseSize(s string) (int, error) {
	n, err := parseSize(s)
	if err != nil {
		return 0, &ParseError{Kind: "size", Input: s, Token: s, Err: err}
	}
	return n, nil
}

func parseSize(s string) (int, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if t == "" {
		return 0, errEmpty
	}
	mult := 1
	for _, u := range sizeUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = t[:len(t)-len(u.suffix)], u.mult
			break
		}
	}
	if t == "" {
		return 0, errors.New("no number")
	}
	if t[0] == '-' {
		return 0, errNegative
	}
	v, err := strconv.ParseUint(t, 10, 31)
	if err != nil {
		return 0, errors.New("not a size (want a number with optional k, m or g)")
	}
	if v*uint64(mult) > MaxSize {
		return 0, fmt.Errorf("larger than %d bytes", MaxSize)
	}
	return int(v) * mult, nil
}

// sizeUnits are the suffixes ParseSize accepts, longest first so "kib" is not read as "b".
var sizeUnits = []struct {
	suffix string
	mult   int
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30},
	{"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30},
	{"b", 1},
}

// ParseSizes parses a comma-separated size list: "64,4k,64k,1m". Empty tokens are errors.
func ParseSizes(s string) ([]int, error) {
	return parseSizeList("size", s)
}

// ParseThresholds parses a comma-separated list of inline thresholds ("1k,4k,16k"). Each
// must be one RFC 8797 private data can carry (CheckThreshold).
func ParseThresholds(s string) ([]int, error) {
	v, err := parseSizeList("threshold", s)
	if err != nil {
		return nil, err
	}
	for i, t := range v {
		if err := CheckThreshold(t); err != nil {
			return nil, &ParseError{Kind: "threshold", Input: s, Token: strings.Split(s, ",")[i], Err: err}
		}
	}
	return v, nil
}

// Inline threshold limits: RFC 8166 section 3.3.2 sets the minimum; RFC 8797 section 4.2
// encodes a size as (octet+1) × 1024, so private data carries multiples of 1 KiB up to 256 KiB.
const (
	MinThreshold = 1024
	MaxThreshold = 256 << 10
)

// CheckThreshold reports whether t is an inline threshold private data can advertise.
func CheckThreshold(t int) error {
	switch {
	case t < MinThreshold:
		return fmt.Errorf("below the RFC 8166 minimum of %d bytes", MinThreshold)
	case t > MaxThreshold:
		return fmt.Errorf("above %d bytes, the most RFC 8797 private data can carry", MaxThreshold)
	case t%1024 != 0:
		return errors.New("not a multiple of 1024, as RFC 8797 private data encodes sizes")
	}
	return nil
}

func parseSizeList(kind, s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, &ParseError{Kind: kind + " list", Input: s, Token: s, Err: errEmpty}
	}
	toks := strings.Split(s, ",")
	out := make([]int, 0, len(toks))
	for _, tok := range toks {
		n, err := parseSize(tok)
		if err != nil {
			return nil, &ParseError{Kind: kind, Input: s, Token: tok, Err: err}
		}
		out = append(out, n)
	}
	return out, nil
}

// ParseDepths parses a comma-separated list of queue depths ("1,16,64").
func ParseDepths(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, &ParseError{Kind: "depth list", Input: s, Token: s, Err: errEmpty}
	}
	var out []int
	for _, tok := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(tok))
		if err != nil || n < 1 || n > MaxDepth {
			return nil, &ParseError{Kind: "depth", Input: s, Token: tok, Err: fmt.Errorf("want an integer in [1, %d]", MaxDepth)}
		}
		out = append(out, n)
	}
	return out, nil
}

// ParseSizeSpec parses a payload size distribution:
//
//	64,4k,64k             a list, drawn uniformly per RPC (one value: fixed)
//	uniform:1k-64k        uniform in [1k, 64k]
//	lognormal:8k          log-normal with median 8k, sigma 1
//	lognormal:8k:1.5      ... sigma 1.5
//	lognormal:8k:1.5:512-1m  ... clamped to [512, 1m]
func ParseSizeSpec(s string) (Sizes, error) {
	bad := func(tok string, err error) (Sizes, error) {
		return Sizes{}, &ParseError{Kind: "size spec", Input: s, Token: tok, Err: err}
	}
	dist, rest, ok := strings.Cut(s, ":")
	if !ok {
		v, err := ParseSizes(s)
		if err != nil {
			return Sizes{}, err
		}
		return Sizes{Values: v}, nil
	}
	switch strings.ToLower(dist) {
	case "uniform":
		lo, hi, err := parseRange(rest)
		if err != nil {
			return bad(rest, err)
		}
		return Sizes{Dist: "uniform", Min: lo, Max: hi}, nil
	case "lognormal":
		parts := strings.Split(rest, ":")
		if len(parts) > 3 {
			return bad(rest, errors.New("want median[:sigma[:min-max]]"))
		}
		med, err := parseSize(parts[0])
		if err != nil {
			return bad(parts[0], err)
		}
		if med == 0 {
			return bad(parts[0], errors.New("median must be positive"))
		}
		z := Sizes{Dist: "lognormal", Median: med, Sigma: 1}
		if len(parts) > 1 {
			sg, err := strconv.ParseFloat(parts[1], 64)
			if err != nil || sg < 0 || math.IsInf(sg, 0) || sg != sg {
				return bad(parts[1], errors.New("sigma must be a non-negative number"))
			}
			z.Sigma = sg
		}
		if len(parts) > 2 {
			if z.Min, z.Max, err = parseRange(parts[2]); err != nil {
				return bad(parts[2], err)
			}
		}
		return z, nil
	}
	return bad(dist, errors.New("unknown distribution (want a size list, uniform:MIN-MAX or lognormal:MEDIAN[:SIGMA[:MIN-MAX]])"))
}

func parseRange(s string) (lo, hi int, err error) {
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		return 0, 0, errors.New("want MIN-MAX")
	}
	if lo, err = parseSize(a); err != nil {
		return 0, 0, fmt.Errorf("min %q: %v", a, err)
	}
	if hi, err = parseSize(b); err != nil {
		return 0, 0, fmt.Errorf("max %q: %v", b, err)
	}
	if lo > hi {
		return 0, 0, fmt.Errorf("min %d above max %d", lo, hi)
	}
	return lo, hi, nil
}

// ParseMix parses a procedure mix: comma-separated PROC[/SIZE][:WEIGHT] entries, for example
// "null:1,echo:4,source/32k:2" or "sink/4k". SIZE is a single size; an entry without one
// inherits Config.Size. WEIGHT defaults to 1. A name of prog.Presets alone is that preset
// ("nfs-like"). PROC is one of prog's procedures, any case; without a prog the error is
// ErrNoProgram, as the workloads choose no program themselves.
func ParseMix(s string, prog *rpcproto.Program) ([]MixEntry, error) {
	if prog == nil {
		return nil, ErrNoProgram
	}
	if p, ok := prog.Presets[strings.ToLower(strings.TrimSpace(s))]; ok {
		return parseEntries(p, prog)
	}
	return parseEntries(s, prog)
}

// parseEntries parses the PROC[/SIZE][:WEIGHT] entries of a mix.
func parseEntries(s string, prog *rpcproto.Program) ([]MixEntry, error) {
	if strings.TrimSpace(s) == "" {
		return nil, &ParseError{Kind: "mix", Input: s, Token: s, Err: errEmpty}
	}
	var out []MixEntry
	for _, tok := range strings.Split(s, ",") {
		bad := func(err error) ([]MixEntry, error) {
			return nil, &ParseError{Kind: "mix entry", Input: s, Token: tok, Err: err}
		}
		t := strings.TrimSpace(tok)
		if t == "" {
			return bad(errEmpty)
		}
		var e MixEntry
		head, w, hasW := strings.Cut(t, ":")
		name, size, hasSize := strings.Cut(head, "/")
		idx, err := prog.Lookup(name)
		if err != nil {
			return bad(err)
		}
		p := &prog.Procs[idx]
		e.Proc = p.Name
		if hasSize {
			if !p.Sized() {
				return bad(fmt.Errorf("%s carries no payload, so takes no size", p.Name))
			}
			n, err := parseSize(size)
			if err != nil {
				return bad(fmt.Errorf("size %q: %v", size, err))
			}
			e.Size = Fixed(n)
		}
		e.Weight = 1
		if hasW {
			n, err := strconv.Atoi(w)
			if err != nil || n < 1 || n > maxWeight {
				return bad(fmt.Errorf("weight %q: want an integer in [1, %d]", w, maxWeight))
			}
			e.Weight = n
		}
		out = append(out, e)
	}
	return out, nil
}

// ParseCPUs parses a CPU list in the kernel's cpuset format: "0,2-3" is CPUs 0, 2 and 3.
// Duplicates are kept out; order is kept (poller i takes the i-th CPU).
func ParseCPUs(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, &ParseError{Kind: "cpu list", Input: s, Token: s, Err: errEmpty}
	}
	var out []int
	seen := make(map[int]bool)
	for _, tok := range strings.Split(s, ",") {
		bad := func(err error) ([]int, error) {
			return nil, &ParseError{Kind: "cpu", Input: s, Token: tok, Err: err}
		}
		a, b, isRange := strings.Cut(strings.TrimSpace(tok), "-")
		lo, err := parseCPU(a)
		if err != nil {
			return bad(err)
		}
		hi := lo
		if isRange {
			if hi, err = parseCPU(b); err != nil {
				return bad(err)
			}
			if hi < lo {
				return bad(fmt.Errorf("range %d-%d runs backwards", lo, hi))
			}
		}
		for c := lo; c <= hi; c++ {
			if seen[c] {
				return bad(fmt.Errorf("cpu %d listed twice", c))
			}
			seen[c] = true
			out = append(out, c)
		}
	}
	return out, nil
}

func parseCPU(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a CPU number", s)
	}
	if n >= maxCPU {
		return 0, fmt.Errorf("cpu %d beyond %d", n, maxCPU-1)
	}
	return n, nil
}

// FormatSize writes n the way ParseSize reads it, with the largest exact binary suffix.
func FormatSize(n int) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return strconv.Itoa(n>>30) + "g"
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.Itoa(n>>20) + "m"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.Itoa(n>>10) + "k"
	}
	return strconv.Itoa(n)
}

// ParseProgram parses PROG[:VERS], an ONC RPC program whose NULL procedure to call, in
// decimal or 0x hex; "nfs" is 100003:3 and "nfs4" 100003:4. VERS defaults to 1.
func ParseProgram(s string) (prog, vers uint32, err error) {
	switch strings.ToLower(s) {
	case "nfs", "nfs3":
		return 100003, 3, nil
	case "nfs4":
		return 100003, 4, nil
	}
	bad := func(tok string, e error) (uint32, uint32, error) {
		return 0, 0, &ParseError{Kind: "program", Input: s, Token: tok, Err: e}
	}
	p, v, hasV := strings.Cut(s, ":")
	n, err := strconv.ParseUint(p, 0, 32)
	if err != nil || n == 0 {
		return bad(p, errors.New("want a program number such as 100003, or nfs"))
	}
	vers = 1
	if hasV {
		m, err := strconv.ParseUint(v, 0, 32)
		if err != nil {
			return bad(v, errors.New("want a version number"))
		}
		vers = uint32(m)
	}
	return uint32(n), vers, nil
}
