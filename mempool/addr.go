package mempool

import "unsafe"

// addrOf is the virtual address of mem[0]: the Addr of an unregistered region. The memory
// is mmap'd, so the address never changes and the garbage collector never tracks it.
func addrOf(mem []byte) uint64 {
	return uint64(uintptr(unsafe.Pointer(unsafe.SliceData(mem))))
}
