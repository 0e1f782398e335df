//go:build linux

package mempool

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

const childEnv = "MEMPOOL_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "mlock" {
		os.Exit(mlockChild())
	}
	os.Exit(m.Run())
}

// smapsOf returns the kB fields of the mapping starting at start in /proc/self/smaps.
func smapsOf(t testing.TB, start uint64) (map[string]int, bool) {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatalf("reading mappings: %v", err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	var fields map[string]int
	for s.Scan() {
		line := s.Text()
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if !strings.HasSuffix(f[0], ":") { // a mapping's header: "lo-hi perms offset dev inode path"
			lo, _, _ := strings.Cut(f[0], "-")
			if fields != nil {
				return fields, true
			}
			if v, err := strconv.ParseUint(lo, 16, 64); err == nil && v == start {
				fields = map[string]int{}
			}
			continue
		}
		if fields != nil {
			k, v, _ := strings.Cut(line, ":")
			if n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB")); err == nil {
				fields[k] = n
			}
		}
	}
	return fields, fields != nil
}

func TestPopulatedUpFront(t *testing.T) {
	// The control: an anonymous mapping nobody touched has no resident pages, so the
	// measurement below can tell populated from not.
	raw, err := unix.Mmap(-1, 0, 1<<20, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	// MADV_DONTFORK, as the region gets, also keeps the kernel from merging the control
	// with a neighbouring mapping whose pages are resident.
	if err := unix.Madvise(raw, unix.MADV_DONTFORK); err != nil {
		t.Fatal(err)
	}
	if sm, ok := smapsOf(t, addrOf(raw)); !ok || sm["Size"] != 1024 || sm["Rss"] != 0 {
		t.Fatalf("untouched control mapping: found %v, Size %d kB, Rss %d kB; want 1024 and 0", ok, sm["Size"], sm["Rss"])
	}
	_ = unix.Munmap(raw)

	r := newRegion(t, nil, onePool(4096, 256))
	defer r.Close()
	sm, ok := smapsOf(t, addrOf(r.Bytes()))
	if !ok {
		t.Fatal("region not in /proc/self/smaps")
	}
	if sm["Size"]*1024 != r.Info().Size || sm["Rss"]*1024 != r.Info().Size {
		t.Fatalf("region of %d bytes has Size %d kB, Rss %d kB: not populated up front", r.Info().Size, sm["Size"], sm["Rss"])
	}
	if r.Info().Locked || r.Info().Registered || r.Info().HugePages {
		t.Fatalf("Info %+v claims what was not asked", r.Info())
	}
}

func TestLazyPoolCostsNothingUntilUsed(t *testing.T) {
	// A 256 KiB eager pool beside a 4 MiB lazy one: only the eager pool is resident at
	// setup, and the lazy one grows by what is written.
	r := newRegion(t, nil, Config{Pools: []PoolConfig{
		{Name: "recv", Size: 4096, Count: 64},
		{Name: "sink", Size: 64 << 10, Count: 64, Lazy: true},
	}})
	defer r.Close()
	info := r.Info()
	if !info.Pools[1].Lazy || info.Pools[0].Lazy {
		t.Fatalf("Info.Pools %+v: Lazy not reported as configured", info.Pools)
	}
	rss := func() int {
		sm, ok := smapsOf(t, addrOf(r.Bytes()))
		if !ok {
			t.Fatal("region not in /proc/self/smaps")
		}
		return sm["Rss"]
	}
	if got := rss(); got != 256 {
		t.Fatalf("after setup Rss %d kB, want 256 (the eager pool only)", got)
	}
	sink := r.Pool("sink")
	b := sink.Get()
	for i := range b.Bytes() {
		b.Bytes()[i] = 1
	}
	if got := rss(); got != 256+64 {
		t.Fatalf("after writing one 64 KiB lazy buffer Rss %d kB, want %d", got, 256+64)
	}
	if err := sink.Put(b); err != nil {
		t.Fatal(err)
	}
}

func hugePagesFree(t *testing.T) int {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "HugePages_Free:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

func TestHugePages(t *testing.T) {
	hp := hugePageSize()
	free := hugePagesFree(t)
	r := newRegion(t, nil, Config{HugePages: true, Pools: []PoolConfig{{Size: 1 << 20, Count: 3}}})
	defer r.Close()
	info := r.Info()
	sm, _ := smapsOf(t, addrOf(r.Bytes()))
	if free*hp >= 4<<20 {
		if !info.HugePages || info.HugePageFallback || info.PageSize != hp || sm["KernelPageSize"]*1024 != hp {
			t.Fatalf("%d huge pages free but got %+v, kernel page %d kB", free, info, sm["KernelPageSize"])
		}
		if info.Size%hp != 0 {
			t.Fatalf("hugetlb mapping of %d bytes is not a whole number of %d-byte pages", info.Size, hp)
		}
		return
	}
	// This system has no huge pages to give (HugePages_Free is 0 unless vm.nr_hugepages is
	// raised), so this is the real fallback path.
	if info.HugePages || !info.HugePageFallback || info.PageSize != os.Getpagesize() || sm["KernelPageSize"]*1024 != os.Getpagesize() {
		t.Fatalf("with %d huge pages free: %+v, kernel page %d kB; want a reported fallback", free, info, sm["KernelPageSize"])
	}
	if len(info.Notes) == 0 || !strings.Contains(info.Notes[0], "fell back to normal pages") || !strings.Contains(info.Notes[0], "vm.nr_hugepages") {
		t.Fatalf("fallback notes %q do not explain it", info.Notes)
	}
	if sm["Rss"]*1024 != info.Size {
		t.Fatalf("fallback region of %d bytes has Rss %d kB: not populated", info.Size, sm["Rss"])
	}
}

func TestHugePageFallbackForced(t *testing.T) {
	var sawHuge bool
	mmapFunc = func(fd int, off int64, n, prot, flags int) ([]byte, error) {
		if flags&unix.MAP_HUGETLB != 0 {
			sawHuge = true
			return nil, unix.ENOMEM
		}
		return unix.Mmap(fd, off, n, prot, flags)
	}
	defer func() { mmapFunc = unix.Mmap }()
	r := newRegion(t, nil, Config{HugePages: true, Pools: []PoolConfig{{Size: 8192, Count: 16}}})
	defer r.Close()
	info := r.Info()
	if !sawHuge || info.HugePages || !info.HugePageFallback || len(info.Notes) == 0 || !strings.Contains(info.Notes[0], unix.ENOMEM.Error()) {
		t.Fatalf("tried huge %v, info %+v", sawHuge, info)
	}
	if sm, _ := smapsOf(t, addrOf(r.Bytes())); sm["Rss"]*1024 != info.Size {
		t.Fatalf("fallback region not populated: Rss %d kB of %d bytes", sm["Rss"], info.Size)
	}
}

func TestLock(t *testing.T) {
	r, err := New(nil, Config{Lock: true, Pools: []PoolConfig{{Size: 4096, Count: 16}}})
	var le *datapath.MemlockError
	if errors.As(err, &le) {
		t.Skipf("this process may not lock 64 KiB (%v); run as root or raise `ulimit -l`", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sm, _ := smapsOf(t, addrOf(r.Bytes()))
	if !r.Info().Locked || sm["Locked"]*1024 != r.Info().Size {
		t.Fatalf("Info.Locked %v, smaps Locked %d kB of %d bytes", r.Info().Locked, sm["Locked"], r.Info().Size)
	}
}

const childLimit = 64 << 10

// mlockChild runs in a child process: with RLIMIT_MEMLOCK at 64 KiB and CAP_IPC_LOCK dropped
// (root is otherwise not limited), it asks for a locked 1 MiB region and prints the error.
func mlockChild() int {
	runtime.LockOSThread() // capabilities are per thread: drop and mlock on this one
	if err := unix.Setrlimit(unix.RLIMIT_MEMLOCK, &unix.Rlimit{Cur: childLimit, Max: childLimit}); err != nil {
		fmt.Println("setrlimit:", err)
		return 2
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		fmt.Println("capget:", err)
		return 2
	}
	data[unix.CAP_IPC_LOCK/32].Effective &^= 1 << (unix.CAP_IPC_LOCK % 32)
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		fmt.Println("capset:", err)
		return 2
	}
	r, err := New(nil, Config{Lock: true, Pools: []PoolConfig{{Size: 1 << 20, Count: 1}}})
	if err == nil {
		r.Close()
		fmt.Println("locked 1 MiB over a 64 KiB limit")
		return 3
	}
	fmt.Print(err.Error())
	var le *datapath.MemlockError
	if !errors.As(err, &le) || !(errors.Is(err, unix.ENOMEM) || errors.Is(err, unix.EPERM)) || le.Cur != childLimit || le.Bytes != 1<<20 {
		return 4
	}
	return 0
}

func TestLockErrorExplainsLimit(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=mlock")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v: %s", err, out)
	}
	msg := string(out)
	t.Log(msg)
	for _, want := range []string{
		"mempool: mlock 1 MiB",
		"RLIMIT_MEMLOCK) is 64 KiB (hard limit 64 KiB)",
		"ulimit -l",
		"/etc/security/limits.conf",
		"LimitMEMLOCK=infinity",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("mlock error %q lacks %q", msg, want)
		}
	}
}

// fakeDevice records registrations; only Register does anything.
type fakeDevice struct {
	regs    int
	mem     []byte
	access  datapath.Access
	mr      *fakeMR
	failReg error
}

var _ datapath.Device = (*fakeDevice)(nil)

func (d *fakeDevice) Info() datapath.DeviceInfo { return datapath.DeviceInfo{Name: "fake"} }
func (d *fakeDevice) Register(mem []byte, access datapath.Access) (datapath.MR, error) {
	d.regs++
	d.mem, d.access = mem, access
	if d.failReg != nil {
		return nil, d.failReg
	}
	d.mr = &fakeMR{mem: mem, access: access}
	return d.mr, nil
}
func (d *fakeDevice) AllocMW() (datapath.MW, error)            { return nil, datapath.ErrNotSupported }
func (d *fakeDevice) AllocPD() (datapath.PD, error)            { return nil, datapath.ErrNotSupported }
func (d *fakeDevice) NewCQ(int) (datapath.CQ, error)           { return nil, datapath.ErrNotSupported }
func (d *fakeDevice) Listen(string) (datapath.Listener, error) { return nil, datapath.ErrNotSupported }
func (d *fakeDevice) Connect(context.Context, string, datapath.QPConfig, []byte) (datapath.Conn, error) {
	return nil, datapath.ErrNotSupported
}
func (d *fakeDevice) Close() error { return nil }

type fakeMR struct {
	mem    []byte
	access datapath.Access
	closed int
}

// The fake's addresses are offsets from a made-up base, as a provider with its own address
// scheme (the soft provider) might use: buffers must take Addr from the MR, not from memory.
const fakeBase = 0x5000_0000

func (m *fakeMR) Bytes() []byte           { return m.mem }
func (m *fakeMR) Addr() uint64            { return fakeBase }
func (m *fakeMR) LKey() uint32            { return 0x1234 }
func (m *fakeMR) RKey() uint32            { return 0xabcd }
func (m *fakeMR) Access() datapath.Access { return m.access }
func (m *fakeMR) Close() error {
	m.closed++
	if m.closed > 1 {
		return datapath.ErrClosed
	}
	return nil
}

func TestRegisterOnceThroughDevice(t *testing.T) {
	dev := &fakeDevice{}
	r := newRegion(t, dev, Config{Pools: []PoolConfig{{Name: "send", Size: 1024, Count: 4}, {Name: "payload", Size: 1 << 20, Count: 2}}})
	if dev.regs != 1 || addrOf(dev.mem) != addrOf(r.Bytes()) || len(dev.mem) != r.Info().Size || dev.access != DefaultAccess {
		t.Fatalf("registered %d times, %d bytes at %#x access %v; want once, the whole %d-byte region at %#x, default access",
			dev.regs, len(dev.mem), addrOf(dev.mem), dev.access, r.Info().Size, addrOf(r.Bytes()))
	}
	if r.MR() != datapath.MR(dev.mr) || !r.Info().Registered {
		t.Fatal("region does not expose its MR")
	}
	for _, p := range r.Pools() {
		for i := 0; i < p.Cap(); i++ {
			b := p.Get()
			off := addrOf(b.Bytes()) - addrOf(r.Bytes())
			if b.Addr() != fakeBase+off || b.LKey() != 0x1234 || b.RKey() != 0xabcd {
				t.Fatalf("buffer %d: addr %#x lkey %#x rkey %#x; want %#x, the MR's keys", b.Index(), b.Addr(), b.LKey(), b.RKey(), fakeBase+off)
			}
			if s := b.SGE(10); s != (datapath.SGE{Addr: fakeBase + off, Length: 10, LKey: 0x1234}) {
				t.Fatalf("buffer %d SGE %+v", b.Index(), s)
			}
			_ = p.Put(b)
		}
	}
	if err := r.Close(); err != nil || dev.mr.closed != 1 {
		t.Fatalf("Close = %v, MR closed %d times", err, dev.mr.closed)
	}

	dev = &fakeDevice{}
	r = newRegion(t, dev, Config{Access: datapath.AccessLocalWrite, Pools: []PoolConfig{{Size: 64, Count: 1}}})
	if dev.access != datapath.AccessLocalWrite {
		t.Fatalf("registered with %v, want the configured local write only", dev.access)
	}
	dev.mr.closed = 1 // make the deregistration fail
	if err := r.Close(); !errors.Is(err, datapath.ErrClosed) || !strings.Contains(err.Error(), "deregister") {
		t.Fatalf("Close with a failing deregistration = %v", err)
	}
}

func TestRegisterFailureUnmaps(t *testing.T) {
	cause := errors.New("ibv_reg_mr: cannot allocate memory")
	dev := &fakeDevice{failReg: cause}
	_, err := New(dev, onePool(4096, 4))
	var e *datapath.OpError
	if !errors.As(err, &e) || e.Op != "mempool: register" || !errors.Is(err, cause) {
		t.Fatalf("New with a failing Register = %v", err)
	}
	if _, ok := smapsOf(t, addrOf(dev.mem)); ok {
		t.Fatal("memory still mapped after a failed registration")
	}
}
