// Thin C layer under package verbs: everything that would otherwise need Go pointers kept by C,
// unions cgo cannot reach, or one cgo call per element of a batch.
//
// Memory rule: every buffer here is allocated by C (vb_qp_alloc, vb_cq_open). Go writes work
// requests into those buffers and passes Go pointers only for the duration of a call
// (vb_cq_poll's output slice, vb_get_event's result). C never keeps a Go pointer.
#ifndef VB_SHIM_H
#define VB_SHIM_H

#include <stdint.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

// Opcodes and flags as datapath.Opcode and datapath.SendFlags number them.
enum {
	VB_OP_SEND = 1,
	VB_OP_SEND_INV = 2,
	VB_OP_WRITE = 3,
	VB_OP_READ = 4,
	VB_OP_RECV = 5,
	VB_OP_BIND_MW = 6,
	VB_OP_LOCAL_INV = 7,

	VB_FLAG_SIGNALED = 1,
	VB_FLAG_INLINE = 2,
	VB_FLAG_FENCE = 4,

	// The verbs wr_id is [63:60] the opcode the work request was posted with (a completion in
	// error carries no valid opcode, and SEND and SEND_WITH_INV complete with the same one),
	// [59:48] the queue pair's slot in its device's table (so polling can account for freed
	// queue entries without a lookup), [47:0] the caller's ID.
	VB_OP_SHIFT = 60,
	VB_SLOT_SHIFT = 48,
	VB_MAX_QPS = 4096,

	// Completions moved per ibv_poll_cq call.
	VB_CQ_BATCH = 64,

	VB_PRIV_MAX = 256,

	// The kernel's IB_WC_WITH_INVALIDATE. rdma_rxe writes the kernel's wc_flags into the
	// user CQ and librxe copies them unchanged, so on rxe a receive that a SEND_WITH_INV
	// completed has this bit (IBV_WC_IP_CSUM_OK in libibverbs' numbering, meaningless on an RC
	// receive) instead of IBV_WC_WITH_INV.
	VB_KERNEL_WC_WITH_INVALIDATE = 1 << 2,
	// rdma_rxe's vendor id (RXE_VENDOR_ID).
	VB_RXE_VENDOR_ID = 0xffffff,
};

// vb_swr is one send work request as Go writes it; vb_post_send turns it into ibv_send_wr.
struct vb_swr {
	uint64_t id; // caller id | opcode << VB_OP_SHIFT
	uint64_t remote_addr;
	struct ibv_mw *mw; // OpBindMW
	struct ibv_mr *mr; // OpBindMW: the region holding the bound range
	uint32_t rkey;
	uint32_t inv_rkey;
	uint32_t bind_access; // IBV_ACCESS_* for OpBindMW
	uint16_t num_sge;
	uint8_t op;
	uint8_t flags;
};

// vb_qp holds a queue pair and the C memory its batches are built in: cap work requests of
// up to sge elements per queue, sg lists preassigned per slot.
struct vb_qp {
	struct ibv_qp *qp;
	uint32_t qp_num;
	int slot;
	// Capacities as the Conn advertises them; the device's queues may be larger.
	int send_cap, send_sge, recv_cap, recv_sge;
	// Queue accounting, so a post beyond the advertised capacity fails with ENOMEM on every
	// device. The poster writes the *_posted counters and sig_tail, the poller the others.
	// A successful send completion retires its work request and the unsignaled ones before
	// it: sig holds the positions of the signaled ones in posting order.
	uint64_t sq_posted, sq_retired, rq_posted, rq_done;
	uint64_t *sig;
	uint64_t sig_head, sig_tail;
	// posted is how many work requests the last vb_post_send or vb_post_recv posted.
	int posted;
	// Deferred posting (Conn.DeferPosts): Go stages work requests at in[0..staged_send) and
	// rwr[0..staged_recv) and links the queue pair on its CQ's pending list; the next
	// vb_cq_poll or vb_cq_arm of that CQ posts them (receives first) before it polls. Go and
	// that call run on the thread that owns the connection; dead and linked are also read
	// and written elsewhere (Close, the reaper), hence atomic.
	int staged_send, staged_recv;
	int flush_rc;   // the first errno a deferred post met, for Go to break the connection
	int flush_send; // whether it was the send queue's
	int dead;       // closed: what is staged is dropped
	int linked;     // on the pending list: the memory must outlive it
	struct vb_qp *pnext;
	struct vb_swr *in;
	struct ibv_send_wr *swr;
	struct ibv_sge *ssge;
	struct ibv_recv_wr *rwr;
	struct ibv_sge *rsge;
};

// vb_wc has exactly the layout of datapath.Completion (checked by the Go side).
struct vb_wc {
	uint64_t id;
	uint32_t qpn;
	uint8_t op;
	uint8_t status;
	uint8_t pad0[2];
	uint32_t byte_len;
	uint32_t inv_rkey;
	uint8_t invalidated;
	uint8_t pad1[7];
};

// vb_dev maps slots to the queue pairs of one device.
struct vb_dev {
	struct vb_qp *slot[VB_MAX_QPS];
};

#define VB_TURN_BUCKETS 256
#define VB_TURN_BUCKET_NS 100

struct vb_cq {
	struct vb_dev *dev;
	struct ibv_cq *cq;
	struct ibv_comp_channel *ch;
	// Completions taken by vb_cq_arm (to close the race between draining and arming) are
	// handed out by the next vb_cq_poll before the CQ is polled again.
	int stash_off, stash_n;
	// Index in wc of the first completion the last vb_cq_poll returned, so Go can read the
	// vendor error of a failed one.
	int last_off;
	int rxe_inv_quirk; // see VB_KERNEL_WC_WITH_INVALIDATE
	// Queue pairs with staged work requests (see vb_qp), in the order they first staged one
	// (a receive staged on one queue pair before a SEND on another that it is meant to take
	// is posted first), and whether posting failed for one since Go last looked.
	struct vb_qp *pending, *pending_tail;
	int flush_failed;
	// The turnaround probe (Config.Turnarounds; off unless probe is set): a poll that
	// returns completions stamps the time it returns (ret_ns), and the next poll that finds
	// work staged adds the time since then to turn_ns (the caller's turnaround: from the
	// completions in Go to the posts they caused back in C) and the time its flush took to
	// post_ns, and counts it in turn_hist (VB_TURN_BUCKET_NS wide buckets, the last one open).
	// Written by the polling thread only; read by Go when it is not polling.
	int probe;
	uint64_t ret_ns, turns, turn_ns, turn_min, turn_max, post_ns;
	uint64_t turn_hist[VB_TURN_BUCKETS];
	struct ibv_wc wc[VB_CQ_BATCH];
};

// vb_event is a copy of an rdma_cm event, taken so the event can be acked at once.
struct vb_event {
	int type;
	int status;
	struct rdma_cm_id *id;
	struct rdma_cm_id *listen_id;
	int priv_len;
	uint8_t initiator_depth;
	uint8_t responder_resources;
	uint8_t priv[VB_PRIV_MAX];
};

struct vb_dev_attr {
	uint64_t max_mr_size, node_guid;
	uint32_t vendor_id, vendor_part_id;
	int max_qp_wr, max_sge, max_cqe, max_qp_rd_atom, max_qp_init_rd_atom, max_mw, phys_port_cnt;
	int node_type;
	char fw_ver[64];
};

struct vb_port_attr {
	int state, active_mtu, link_layer, gid_tbl_len;
};

struct vb_gid {
	uint8_t raw[16];
	uint32_t type;
	char netdev[32];
};

int vb_query_device(struct ibv_context *ctx, struct vb_dev_attr *out);
int vb_query_port(struct ibv_context *ctx, int port, struct vb_port_attr *out);
int vb_query_gid(struct ibv_context *ctx, int port, int index, struct vb_gid *out);
int vb_probe_inline(struct ibv_context *ctx, struct ibv_pd *pd, int hi);

struct vb_qp *vb_qp_alloc(int send_cap, int send_sge, int recv_cap, int recv_sge);
void vb_qp_free(struct vb_qp *q);
int vb_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_cq *scq, struct ibv_cq *rcq,
		 struct ibv_qp_cap *cap);
// The calls of the datapath take their handles as uintptr_t: cgo checks every pointer
// argument of a call for Go pointers (cgocheck), which cost more than the call itself under
// emulation; these get no Go pointer but the completion array, which the caller keeps alive.
int vb_post_send(uintptr_t qp, int n);
int vb_post_recv(uintptr_t qp, int n);

struct vb_cq *vb_cq_open(struct vb_dev *dev, struct ibv_context *ctx, int depth, int *err);
void vb_dev_set(struct vb_dev *dev, int slot, struct vb_qp *q);
int vb_cq_close(struct vb_cq *c);
int vb_cq_poll(uintptr_t cq, uintptr_t out, int max, int spin);
int vb_cq_arm(uintptr_t cq);
int vb_cq_event(uintptr_t cq);
void vb_cq_flush(struct vb_cq *c);
int vb_status(int ibv_status);

// vb_now reads CLOCK_MONOTONIC in ns.
uint64_t vb_now(void);

struct ibv_mr *vb_reg_mr(struct ibv_pd *pd, uintptr_t addr, size_t len, int access);

int vb_set_min_rnr_timer(struct ibv_qp *qp, int timer);
int vb_nonblock(int fd);
int vb_get_event(struct rdma_event_channel *ch, struct vb_event *out);
int vb_sockaddr(const char *host, int port, struct sockaddr_storage *out);
int vb_addr_string(struct sockaddr *sa, char *buf, int len);
int vb_connect(struct rdma_cm_id *id, const void *priv, int len, int rd_depth, int rnr_retry);
int vb_accept(struct rdma_cm_id *id, const void *priv, int len, int resp_res, int init_depth,
	      int rnr_retry);

#endif
