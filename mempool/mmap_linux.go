package mempool

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

type mapping struct {
	mem      []byte
	pageSize int
	huge     bool
	notes    []string
}

// mmapFunc is unix.Mmap; tests replace it to force the huge page fallback.
var mmapFunc = unix.Mmap

// mapRegion maps size bytes of private anonymous memory, populated up front (unless
// populateAll is false: then the caller populates what it wants) so the first access on the
// hot path takes no page fault, and excluded from fork (MADV_DONTFORK, as ibv_fork_init
// does) so a child never makes registered pages copy-on-write.
func mapRegion(size int, huge, populateAll bool) (mapping, error) {
	const prot = unix.PROT_READ | unix.PROT_WRITE
	flags := unix.MAP_PRIVATE | unix.MAP_ANONYMOUS | unix.MAP_POPULATE
	if !populateAll {
		flags &^= unix.MAP_POPULATE
	}
	var m mapping
	if huge {
		hp := hugePageSize()
		n := roundUp(size, hp)
		mem, err := mmapFunc(-1, 0, n, prot, flags|unix.MAP_HUGETLB)
		if err == nil {
			m = mapping{mem: mem, pageSize: hp, huge: true}
		} else {
			m.notes = append(m.notes, fmt.Sprintf(
				"huge pages unavailable (mmap MAP_HUGETLB of %d bytes: %v; reserve them with sysctl vm.nr_hugepages=N): fell back to normal pages with transparent huge pages requested", n, err))
		}
	}
	if m.mem == nil {
		page := os.Getpagesize()
		n := roundUp(size, page)
		fl := flags
		if huge {
			// Populate after madvise, so transparent huge pages can back the faults.
			fl &^= unix.MAP_POPULATE
		}
		mem, err := mmapFunc(-1, 0, n, prot, fl)
		if err != nil {
			return mapping{}, &datapath.OpError{Op: fmt.Sprintf("mempool: mmap %d bytes", n), Err: err}
		}
		m.mem, m.pageSize = mem, page
		if huge {
			if err := unix.Madvise(mem, unix.MADV_HUGEPAGE); err != nil {
				m.notes = append(m.notes, "madvise MADV_HUGEPAGE: "+err.Error())
			}
			if populateAll {
				populate(mem, page)
			}
		}
	}
	if err := unix.Madvise(m.mem, unix.MADV_DONTFORK); err != nil {
		_ = unix.Munmap(m.mem)
		return mapping{}, &datapath.OpError{Op: "mempool: madvise MADV_DONTFORK", Err: err}
	}
	return m, nil
}

// populate faults every page of mem in, as MAP_POPULATE would have.
func populate(mem []byte, page int) {
	if len(mem) == 0 {
		return
	}
	if unix.Madvise(mem, unix.MADV_POPULATE_WRITE) == nil {
		return
	}
	for i := 0; i < len(mem); i += page { // kernels before 5.14
		mem[i] = 0
	}
}

func unmap(mem []byte) error {
	if err := unix.Munmap(mem); err != nil {
		return &datapath.OpError{Op: "mempool: munmap", Err: err}
	}
	return nil
}

func lock(mem []byte) error {
	err := unix.Mlock(mem)
	if err == nil {
		return nil
	}
	le := &datapath.MemlockError{Op: "mempool: mlock", Bytes: len(mem), Err: err}
	var lim unix.Rlimit
	if gerr := unix.Getrlimit(unix.RLIMIT_MEMLOCK, &lim); gerr == nil {
		le.Cur, le.Max = lim.Cur, lim.Max
	} else {
		return &datapath.OpError{Op: "mempool: mlock", Err: errors.Join(err, gerr)}
	}
	return le
}

// hugePageSize is the default hugetlb page size from /proc/meminfo, or 2 MiB.
func hugePageSize() int {
	const fallback = 2 << 20
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return fallback
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		rest, ok := strings.CutPrefix(s.Text(), "Hugepagesize:")
		if !ok {
			continue
		}
		kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
		if err != nil || kb <= 0 {
			return fallback
		}
		return kb << 10
	}
	return fallback
}

func roundUp(n, to int) int { return (n + to - 1) / to * to }
