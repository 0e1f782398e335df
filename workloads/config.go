package workloads

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
)

// Duration is a time.Duration that reads and writes JSON as a Go duration string ("5s").
type Duration time.Duration

// MarshalText writes the duration as time.Duration.String does, or "none" if negative.
func (d Duration) MarshalText() ([]byte, error) {
	if d < 0 {
		return []byte("none"), nil
	}
	return []byte(time.Duration(d).String()), nil
}

// UnmarshalText parses a Go duration string or "none" (NoWarmup); a bare integer is
// nanoseconds.
func (d *Duration) UnmarshalText(b []byte) error {
	s := string(b)
	if s == "none" {
		*d = NoWarmup
		return nil
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		*d = Duration(n)
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("workloads: bad duration %q", s)
	}
	*d = Duration(v)
	return nil
}

// Sizes is a payload size distribution. The zero value means the default of its context
// (a MixEntry inherits Config.Size; Config.Size defaults to a fixed DefaultSize).
type Sizes struct {
	// Dist is the distribution: "" or "list" draws uniformly from Values (one value: always
	// that size); "uniform" draws uniformly from [Min, Max]; "lognormal" draws
	// exp(N(ln Median, Sigma²)) and clamps it to [Min, Max] (Min default 0, Max default
	// the larger of Median and DefaultLognormalMax), the usual shape of file-system I/O sizes.
	Dist string `json:"dist,omitempty"`
	// Values are the sizes of a "list", in bytes.
	Values []int `json:"values,omitempty"`
	// Min and Max bound "uniform" and "lognormal", in bytes.
	Min int `json:"min,omitempty"`
	Max int `json:"max,omitempty"`
	// Median and Sigma shape "lognormal": the median size in bytes and the standard
	// deviation of the size's natural logarithm (default 1).
	Median int     `json:"median,omitempty"`
	Sigma  float64 `json:"sigma,omitempty"`
}

// Fixed returns the Sizes that always draws n bytes.
func Fixed(n int) Sizes { return Sizes{Values: []int{n}} }

// IsZero reports whether s is the zero value (inherit the default).
func (s Sizes) IsZero() bool {
	return s.Dist == "" && len(s.Values) == 0 && s.Min == 0 && s.Max == 0 && s.Median == 0 && s.Sigma == 0
}

// DefaultLognormalMax is the default upper clamp of a log-normal size: the engine sizes its
// registered buffers for the largest payload, so the tail must be bounded.
const DefaultLognormalMax = 1 << 20

func (s Sizes) normalized() Sizes {
	if s.Dist == "lognormal" && s.Max == 0 {
		s.Max = max(s.Median, DefaultLognormalMax)
	}
	return s
}

// Largest is the largest size s can draw.
func (s Sizes) Largest() int {
	switch s.Dist {
	case "uniform", "lognormal":
		return s.normalized().Max
	}
	m := 0
	for _, v := range s.Values {
		m = max(m, v)
	}
	return m
}

// MaxPayload is the largest payload any RPC of c (normalized) carries in one direction: what
// the engine must size its chunk buffers for.
func (c Config) MaxPayload() int {
	m := 0
	for _, e := range c.Mix {
		if !e.Size.IsZero() {
			m = max(m, e.Size.Largest())
		}
	}
	return m
}

func (s Sizes) validate() error {
	switch s.Dist {
	case "", "list":
		if len(s.Values) == 0 {
			return errors.New("size list is empty")
		}
		for _, v := range s.Values {
			if v < 0 || v > MaxSize {
				return fmt.Errorf("size %d out of range [0, %d]", v, MaxSize)
			}
		}
	case "uniform":
		if s.Min < 0 || s.Max > MaxSize || s.Min > s.Max {
			return fmt.Errorf("uniform sizes need 0 <= min <= max <= %d, have [%d, %d]", MaxSize, s.Min, s.Max)
		}
	case "lognormal":
		if s.Median <= 0 || s.Median > MaxSize {
			return fmt.Errorf("lognormal median %d out of range (0, %d]", s.Median, MaxSize)
		}
		if s.Sigma < 0 {
			return fmt.Errorf("lognormal sigma %g is negative", s.Sigma)
		}
		if s.Min < 0 || s.Max < 0 || s.Max > MaxSize || (s.Max != 0 && s.Min > s.Max) {
			return fmt.Errorf("lognormal bounds [%d, %d] out of range", s.Min, s.Max)
		}
	default:
		return fmt.Errorf("unknown size distribution %q (want list, uniform or lognormal)", s.Dist)
	}
	return nil
}

// MixEntry is one procedure of a mix with its relative weight.
type MixEntry struct {
	// Proc names a procedure of the workload's program (Config.Prog), as its table spells
	// it: "echo", "read".
	Proc string `json:"proc"`
	// Weight is the entry's share of RPCs relative to the other entries' weights (0 means 1).
	Weight int `json:"weight,omitempty"`
	// Size is the payload size, carried by the messages the procedure's table entry says
	// (ECHO: both, SINK: the call, SOURCE: the reply). The zero value inherits Config.Size;
	// a procedure without payload (NULL) must leave it zero.
	Size Sizes `json:"size,omitzero"`
}

// Config is a workload of the program its caller gives it (Prog, or Program's NULL alone):
// which program is the default is the caller's choice, so a Config naming none is refused
// by Normalized. Given only a program, it is that program's default mix, closed loop at
// depth 16 on one connection and one poller, for 5 s after a 1 s warm-up.
type Config struct {
	// Mix lists the procedures and their weights. Empty means the program's default preset
	// (rpcproto.Program.DefaultMix); a program without one needs a Mix.
	Mix []MixEntry `json:"mix,omitempty"`
	// Size is the payload size of mix entries that have none (default Fixed(DefaultSize)).
	Size Sizes `json:"size,omitzero"`
	// Class forces every RPC's message class; ClassAuto (default) lets the requester choose
	// from the negotiated thresholds. A forced class the RPC cannot use (chunked for a NULL)
	// is the engine's to reject.
	Class rpcproto.Kind `json:"class,omitempty"`
	// Prog is the RPC program whose procedures the Mix names. nil needs Program set (that
	// program's NULL procedure alone); with neither, Normalized refuses the Config.
	Prog *rpcproto.Program `json:"-"`
	// Program and Version record the numbers of a program served outside this tool: set
	// them (without Prog) to call the NULL procedure of any ONC RPC program, for example NFS
	// (100003, version 3) to measure a server such as the Linux kernel's that knows nothing
	// of the benchmark program. Normalized fills them from an External Prog; they stay 0
	// for a program this tool serves, which the results file names by its mix alone.
	Program uint32 `json:"program,omitempty"`
	Version uint32 `json:"version,omitempty"`
	// Verify asks the responder (and the requester, for replies) to check payload contents, so
	// a run never reports speed for corrupted data. It costs a pass over every payload.
	Verify bool `json:"verify,omitempty"`

	// Depth is the number of RPCs outstanding per connection (default 16). In open loop it
	// caps the outstanding RPCs; sends the cap holds back are late, and their latency counts
	// from the intended send time.
	Depth int `json:"depth,omitempty"`
	// Connections is the number of connections (default 1), spread round-robin over pollers.
	Connections int `json:"connections,omitempty"`
	// Pollers is the number of poller goroutines (default 1), each on its own locked OS
	// thread with its own Client, connections and Recorder.
	Pollers int `json:"pollers,omitempty"`
	// CPUs pins poller i to CPUs[i%len(CPUs)]. Empty leaves the locked threads unpinned:
	// two busy pollers pinned to one CPU are far worse than letting the scheduler place them,
	// and only the caller knows which CPUs the other side of the benchmark uses.
	CPUs []int `json:"cpus,omitempty"`
	// Poll is how each poller waits when nothing completed: busy (the default: no wakeup on
	// the measured path), event, or hybrid. A Client that cannot block (no Waiter) is
	// polled busily whatever this says.
	Poll datapath.Poll `json:"poll"`

	// Duration is the measured time after the warm-up (default 5s unless Count is set).
	Duration Duration `json:"duration,omitempty"`
	// Count, when positive, ends the measured phase after this many RPCs have been sent
	// (over all pollers), whichever of Count and a set Duration comes first.
	Count int64 `json:"count,omitempty"`
	// Warmup is run before the measured phase and discarded (default 1s; negative, such as
	// NoWarmup: none).
	Warmup Duration `json:"warmup,omitempty"`
	// Drain bounds how long a poller waits for its outstanding RPCs after the measured phase
	// or a stop before counting them abandoned; zero derives it from the RTTs observed (see
	// DrainFor).
	Drain Duration `json:"drain,omitempty"`

	// Rate, when positive, runs open loop at this many RPC/s over all pollers; zero runs
	// closed loop (each completion immediately sends the next RPC).
	Rate float64 `json:"rate,omitempty"`
	// Arrival is the open-loop inter-arrival law: "constant" (default, exactly 1/Rate apart)
	// or "poisson" (exponential gaps with mean 1/Rate, from the seeded RNG).
	Arrival string `json:"arrival,omitempty"`

	// Seed seeds every random draw (sizes, mix order, Poisson gaps); the same Seed gives the
	// same RPC sequence. Zero means 1.
	Seed uint64 `json:"seed,omitempty"`
	// TableSize is the number of RPCs drawn before the run, cycled during it, so the hot path
	// neither allocates nor draws random numbers (default 4096; rounded up to a power of two).
	TableSize int `json:"table_size,omitempty"`
}

// Defaults.
const (
	DefaultSize      = 1024
	DefaultDepth     = 16
	DefaultDuration  = 5 * time.Second
	DefaultWarmup    = time.Second
	DefaultTableSize = 4096
	// MaxSize bounds any payload size (1 GiB): a sanity limit for parsing, not a protocol one.
	MaxSize = 1 << 30
	// MaxDepth bounds Depth: far beyond any credit window a responder grants.
	MaxDepth = 1 << 16
	// MaxConnections bounds Connections, and MaxOutstanding the RPCs one poller keeps
	// outstanding (Depth × its connections), so a typo cannot allocate gigabytes of slots.
	MaxConnections = 1 << 12
	MaxOutstanding = 1 << 20
	// MaxDuration bounds Duration and Warmup (a year), so clock arithmetic cannot overflow.
	MaxDuration = Duration(365 * 24 * time.Hour)
	// MinRate and MaxRate bound an open-loop Rate in RPC/s.
	MinRate = 1e-3
	MaxRate = 1e10
)

// NoWarmup is the Warmup of a run without warm-up; JSON spells it "none".
const NoWarmup Duration = -1

// ErrNoProgram: a Config names no program (neither Prog nor Program), and the workloads
// choose none themselves.
var ErrNoProgram = errors.New("workloads: no program: set Prog, or Program for its NULL procedure alone")

// Table is the program whose procedures the Mix names: Prog, else with Program set that
// program's NULL alone (a new table each call: call it once per run), else nil (a Config
// that Normalized refuses with ErrNoProgram).
func (c *Config) Table() *rpcproto.Program {
	switch {
	case c.Prog != nil:
		return c.Prog
	case c.Program != 0:
		return rpcproto.NullProgram(c.Program, c.Version)
	}
	return nil
}

// Normalized returns c with every default filled in and checks it; normalizing a normalized
// Config changes nothing. Errors name the field; a Config without a program is
// ErrNoProgram.
func (c Config) Normalized() (Config, error) {
	for _, step := range []func() error{c.normalizeMix, c.normalizeShape, c.normalizeTiming} {
		if err := step(); err != nil {
			return c, err
		}
	}
	return c, nil
}

// normalizeMix fills and checks what is sent: the mix, its sizes, the program and the class.
func (c *Config) normalizeMix() error {
	switch {
	case c.Prog != nil && c.Prog.External:
		c.Program, c.Version = c.Prog.Number, c.Prog.Version
	case c.Prog == nil && c.Program == 0 && c.Version != 0:
		return fmt.Errorf("workloads: version %d without a program", c.Version)
	case c.Prog == nil && c.Program == 0:
		return ErrNoProgram
	}
	prog := c.Table()
	if len(c.Mix) == 0 {
		mix, err := defaultMix(prog)
		if err != nil {
			return err
		}
		c.Mix = mix
	} else {
		c.Mix = append([]MixEntry(nil), c.Mix...)
	}
	if c.Size.IsZero() {
		c.Size = Fixed(DefaultSize)
	}
	c.Size = c.Size.normalized()
	if err := c.Size.validate(); err != nil {
		return fmt.Errorf("workloads: size: %v", err)
	}
	for i := range c.Mix {
		e := &c.Mix[i]
		idx, err := prog.Lookup(e.Proc)
		if err != nil {
			return fmt.Errorf("workloads: mix entry %d: %v", i, err)
		}
		p := &prog.Procs[idx]
		e.Proc = p.Name
		if e.Weight < 0 {
			return fmt.Errorf("workloads: mix entry %d (%v): negative weight %d", i, e.Proc, e.Weight)
		}
		if e.Weight == 0 {
			e.Weight = 1
		}
		if e.Weight > maxWeight {
			return fmt.Errorf("workloads: mix entry %d (%v): weight %d above %d", i, e.Proc, e.Weight, maxWeight)
		}
		if !p.Sized() {
			if !e.Size.IsZero() {
				return fmt.Errorf("workloads: mix entry %d: %s carries no payload, so takes no size", i, e.Proc)
			}
			continue
		}
		if e.Size.IsZero() {
			e.Size = c.Size
		}
		e.Size = e.Size.normalized()
		if err := e.Size.validate(); err != nil {
			return fmt.Errorf("workloads: mix entry %d (%v): %v", i, e.Proc, err)
		}
	}
	if int(c.Class) >= rpcproto.NumKinds {
		return fmt.Errorf("workloads: unknown message class %d", c.Class)
	}
	if c.Class == rpcproto.Chunked {
		for _, e := range c.Mix {
			if i, _ := prog.Lookup(e.Proc); prog.Procs[i].DDP == rpcproto.None {
				return fmt.Errorf("workloads: class chunked needs DDP-eligible data, which %s does not carry", e.Proc)
			}
		}
	}
	return nil
}

// normalizeShape fills and checks how it is sent: drain, depth, connections, pollers and CPUs.
func (c *Config) normalizeShape() error {
	if c.Drain < 0 {
		return fmt.Errorf("workloads: drain %v is negative", time.Duration(c.Drain))
	}
	if c.Depth == 0 {
		c.Depth = DefaultDepth
	}
	if c.Depth < 0 || c.Depth > MaxDepth {
		return fmt.Errorf("workloads: depth %d out of range [1, %d]", c.Depth, MaxDepth)
	}
	if c.Connections == 0 {
		c.Connections = 1
	}
	if c.Pollers == 0 {
		c.Pollers = 1
	}
	if c.Connections < 0 || c.Pollers < 0 || c.Connections > MaxConnections {
		return fmt.Errorf("workloads: %d connections, %d pollers: want 1 to %d connections", c.Connections, c.Pollers, MaxConnections)
	}
	if per := (c.Connections + c.Pollers - 1) / c.Pollers; c.Depth*per > MaxOutstanding {
		return fmt.Errorf("workloads: depth %d × %d connections per poller is above %d outstanding RPCs", c.Depth, per, MaxOutstanding)
	}
	if c.Pollers > c.Connections {
		return fmt.Errorf("workloads: %d pollers for %d connections: a poller needs a connection", c.Pollers, c.Connections)
	}
	for _, cpu := range c.CPUs {
		if cpu < 0 || cpu >= maxCPU {
			return fmt.Errorf("workloads: cpu %d out of range [0, %d)", cpu, maxCPU)
		}
	}
	return nil
}

// normalizeTiming fills and checks when: count, duration, warm-up, rate, arrival, seed and table.
func (c *Config) normalizeTiming() error {
	if c.Count < 0 {
		return fmt.Errorf("workloads: negative count %d", c.Count)
	}
	if c.Duration < 0 || c.Duration > MaxDuration {
		return fmt.Errorf("workloads: duration %v out of range [0, %v]", time.Duration(c.Duration), time.Duration(MaxDuration))
	}
	if c.Warmup > MaxDuration {
		return fmt.Errorf("workloads: warm-up %v above %v", time.Duration(c.Warmup), time.Duration(MaxDuration))
	}
	if c.Duration == 0 && c.Count == 0 {
		c.Duration = Duration(DefaultDuration)
	}
	if c.Warmup == 0 {
		c.Warmup = Duration(DefaultWarmup)
	}
	if c.Warmup < 0 {
		// Stays negative rather than 0, so that normalizing again keeps "none".
		c.Warmup = NoWarmup
	}
	if c.Rate != 0 && !(c.Rate >= MinRate && c.Rate <= MaxRate) {
		return fmt.Errorf("workloads: rate %g out of range [%g, %g] RPC/s (0: closed loop)", c.Rate, MinRate, MaxRate)
	}
	switch c.Arrival {
	case "":
		if c.Rate > 0 {
			c.Arrival = "constant"
		}
	case "constant", "poisson":
	default:
		return fmt.Errorf("workloads: unknown arrival law %q (want constant or poisson)", c.Arrival)
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.TableSize == 0 {
		c.TableSize = DefaultTableSize
	}
	if c.TableSize < 0 || c.TableSize > 1<<24 {
		return fmt.Errorf("workloads: table size %d out of range [1, %d]", c.TableSize, 1<<24)
	}
	c.TableSize = ceilPow2(c.TableSize)
	return nil
}

// maxWeight bounds mix weights so that Table's share arithmetic cannot overflow.
const maxWeight = 1 << 20

// maxCPU bounds CPU numbers to what a unix.CPUSet can hold.
const maxCPU = 1024

func ceilPow2(n int) int {
	p := 1
	for p < n {
		p <<= 1
	}
	return p
}

// PollerShare is how many connections poller i of c serves (connections are dealt
// round-robin). c must be normalized.
func (c Config) PollerShare(i int) int {
	n := c.Connections / c.Pollers
	if i < c.Connections%c.Pollers {
		n++
	}
	return n
}

// LargestRead is the largest size pts's mixes give a procedure named "read": 0 when they
// name procedures other than "null" but no read, -1 when they name none (calls that name no
// file, for a program whose setup finds files).
func LargestRead(pts []Point) int {
	n := -1
	for _, pt := range pts {
		for _, e := range pt.Workload.Mix {
			if e.Proc != "null" {
				n = max(n, 0)
			}
			if e.Proc == "read" {
				n = max(n, e.Size.Largest())
			}
		}
	}
	return n
}
