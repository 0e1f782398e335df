package fanin

import (
	"errors"
	"sync"
)

// NewLocal returns the n ranks of a job whose ranks are goroutines of this process: the Comm
// of tests, without MPI. Each rank's Host is host.
func NewLocal(n int, host string) []Comm {
	j := &localJob{n: n, in: make(chan localMsg, n), out: make([]chan localMsg, n), aborted: make(chan struct{})}
	for i := range j.out {
		j.out[i] = make(chan localMsg, 1)
	}
	go j.run()
	cs := make([]Comm, n)
	for i := range cs {
		cs[i] = &local{job: j, rank: i, host: host}
	}
	return cs
}

// errAborted is what the collectives of an aborted local job return.
var errAborted = errors.New("local job aborted")

type localMsg struct {
	rank int
	op   string
	b    []byte
	all  [][]byte
}

// localJob runs every collective: it waits for all n ranks' contributions, then answers each.
type localJob struct {
	n         int
	in        chan localMsg
	out       []chan localMsg
	abortOnce sync.Once
	aborted   chan struct{}
}

func (j *localJob) run() {
	for {
		parts := make([][]byte, j.n)
		op := ""
		for range j.n {
			var m localMsg
			select {
			case m = <-j.in:
			case <-j.aborted:
				return
			}
			if op != "" && m.op != op {
				panic("fanin: local ranks called different collectives: " + op + " and " + m.op)
			}
			op, parts[m.rank] = m.op, m.b
		}
		for r := range j.n {
			j.out[r] <- localMsg{op: op, all: parts}
		}
	}
}

type local struct {
	job  *localJob
	rank int
	host string
}

func (c *local) Rank() int    { return c.rank }
func (c *local) Size() int    { return c.job.n }
func (c *local) Host() string { return c.host }

func (c *local) collective(op string, b []byte) ([][]byte, error) {
	select {
	case c.job.in <- localMsg{rank: c.rank, op: op, b: append([]byte(nil), b...)}:
	case <-c.job.aborted:
		return nil, errAborted
	}
	select {
	case m := <-c.job.out[c.rank]:
		return m.all, nil
	case <-c.job.aborted:
		return nil, errAborted
	}
}

func (c *local) Barrier() error {
	_, err := c.collective("barrier", nil)
	return err
}

func (c *local) Gather(b []byte) ([][]byte, error) {
	all, err := c.collective("gather", b)
	if err != nil || c.rank != 0 {
		return nil, err
	}
	return all, nil
}

func (c *local) Bcast(b []byte) ([]byte, error) {
	all, err := c.collective("bcast", b)
	if err != nil {
		return nil, err
	}
	return all[0], nil
}

func (c *local) Abort(int) { c.job.abortOnce.Do(func() { close(c.job.aborted) }) }

func (c *local) Close() error { return nil }
