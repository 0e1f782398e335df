// The ping-pong's C loop (pingpong.c), a lab instrument built only with -tags pingpong.
#ifndef VB_PINGPONG_H
#define VB_PINGPONG_H

#include "shim.h"

// vb_pingpong describes one side of a SEND/RECV ping-pong driven from C (see shim.c).
struct vb_pingpong {
	int client, warmup, iters, signal_every, inl;
	uint32_t send_len, recv_len, lkey;
	uint64_t send_addr, recv_base, recv_stride;
	uint64_t wait_ns; // the longest wait for a completion before giving up (ETIMEDOUT)
	// The server's RDMA operation between each call and its reply, as an RPC with a Read
	// chunk (VB_OP_READ: waited for before the reply) or a Write chunk (VB_OP_WRITE: posted
	// with the reply) moves its data; 0 for none. chunk_len bytes at chunk_local (lkey) from
	// or to the peer's chunk_remote (chunk_rkey).
	int chunk_op;
	uint32_t chunk_len, chunk_rkey;
	uint64_t chunk_local, chunk_remote;
	// Out: the failed completion that ended the loop (vb_status numbering) and its opcode.
	int status, op;
};
int vb_pingpong(uintptr_t cq, uintptr_t qp, struct vb_pingpong *p, int64_t *rtts);

#endif
