//go:build verbs && cgo && pingpong

// The ping-pong's loop in C: a lab instrument for test/vm's latency table, not part of the
// provider, so it is built only with -tags pingpong.
#include "pingpong.h"

#include <errno.h>

// vb_link puts q on c's pending list once, as conn.link does from Go.
static void vb_link(struct vb_cq *c, struct vb_qp *q)
{
	if (q->linked)
		return;
	__atomic_store_n(&q->linked, 1, __ATOMIC_RELEASE);
	if (c->pending_tail)
		c->pending_tail->pnext = q;
	else
		c->pending = q;
	c->pending_tail = q;
}

// pp_stage stages one send-queue work request of one SGE, as the Go datapath stages one.
static int pp_stage(struct vb_cq *c, struct vb_qp *q, uint64_t id, int op, int flags, uint64_t addr, uint32_t len,
		    uint32_t lkey, uint64_t remote_addr, uint32_t rkey)
{
	int at = q->staged_send;
	if (q->sq_posted + (uint64_t)at + 1 - __atomic_load_n(&q->sq_retired, __ATOMIC_ACQUIRE) > (uint64_t)q->send_cap)
		return ENOMEM;
	struct vb_swr *in = &q->in[at];
	in->id = id | (uint64_t)op << VB_OP_SHIFT;
	in->op = (uint8_t)op;
	in->flags = (uint8_t)flags;
	in->num_sge = 1;
	in->remote_addr = remote_addr;
	in->rkey = rkey;
	struct ibv_sge *s = &q->ssge[(size_t)at * q->send_sge];
	s->addr = addr;
	s->length = len;
	s->lkey = lkey;
	q->staged_send = at + 1;
	vb_link(c, q);
	return 0;
}

// pp_stage_send stages round trip k's SEND as the Go ping-pong does: the same buffer every
// time, signaled once every signal_every.
static int pp_stage_send(struct vb_cq *c, struct vb_qp *q, const struct vb_pingpong *p, uint64_t k)
{
	int sig = k % (uint64_t)p->signal_every == (uint64_t)p->signal_every - 1;
	return pp_stage(c, q, 1ULL << 20, VB_OP_SEND, (p->inl ? VB_FLAG_INLINE : 0) | (sig ? VB_FLAG_SIGNALED : 0),
			p->send_addr, p->send_len, p->lkey, 0, 0);
}

// pp_stage_recv stages the receive of slot id again.
static int pp_stage_recv(struct vb_cq *c, struct vb_qp *q, const struct vb_pingpong *p, uint64_t id)
{
	int at = q->staged_recv;
	if (q->rq_posted + (uint64_t)at + 1 - __atomic_load_n(&q->rq_done, __ATOMIC_ACQUIRE) > (uint64_t)q->recv_cap)
		return ENOMEM;
	struct ibv_recv_wr *w = &q->rwr[at];
	w->wr_id = id | (uint64_t)VB_OP_RECV << VB_OP_SHIFT;
	w->num_sge = 1;
	w->sg_list[0].addr = p->recv_base + id * p->recv_stride;
	w->sg_list[0].length = p->recv_len;
	w->sg_list[0].lkey = p->lkey;
	q->staged_recv = at + 1;
	vb_link(c, q);
	return 0;
}

// pp_stage_chunk stages the server's RDMA Read or Write of the chunk: a Read signaled, since
// the reply waits for its completion; a Write not, since the reply's SEND follows it in order.
static int pp_stage_chunk(struct vb_cq *c, struct vb_qp *q, const struct vb_pingpong *p)
{
	return pp_stage(c, q, 2ULL << 20, p->chunk_op, p->chunk_op == VB_OP_READ ? VB_FLAG_SIGNALED : 0, p->chunk_local,
			p->chunk_len, p->lkey, p->chunk_remote, p->chunk_rkey);
}

// pp_await polls (posting what is staged) until a completion of opcode want: a receive,
// whose slot's receive it stages again, or the chunk's Read. It returns 0, an errno (a post
// the device refused, ETIMEDOUT, EPROTO for a receive while a Read was awaited), -1 (the CQ
// failed) or -2 (a completion failed: p->status and p->op say which).
static int pp_await(struct vb_cq *c, struct vb_qp *q, struct vb_pingpong *p, struct vb_wc *wc, int want)
{
	uint64_t deadline = 0;
	for (unsigned empty = 0;; empty++) {
		int n = vb_cq_poll((uintptr_t)c, (uintptr_t)wc, 16, 0);
		if (c->flush_failed)
			return q->flush_rc ? q->flush_rc : EIO;
		if (n < 0)
			return -1;
		for (int j = 0; j < n; j++) {
			if (wc[j].status) {
				p->status = wc[j].status;
				p->op = wc[j].op;
				return -2;
			}
			if (wc[j].op == want)
				return want == VB_OP_RECV ? pp_stage_recv(c, q, p, wc[j].id) : 0;
			if (wc[j].op == VB_OP_RECV)
				return EPROTO; // the peer sent before its reply: not this ping-pong
		}
		if (n == 0 && (empty & 1023) == 1023) {
			uint64_t now = vb_now();
			if (deadline == 0)
				deadline = now + p->wait_ns;
			else if (now > deadline)
				return ETIMEDOUT;
		}
	}
}

// vb_pingpong runs one side of a SEND/RECV ping-pong, warmup and then iters round trips,
// entirely in C, through the same calls and the same deferred posting the Go datapath uses:
// a receive completion stages its slot's receive again (and, on the server, the reply, after
// the chunk's Read has completed or together with its Write), and the next vb_cq_poll posts
// them and polls. The client stages its SEND at the start of each round trip and writes the
// measured round trips' times in ns to rtts[0..iters). It is what the datapath costs with no
// Go between a completion and the posts it causes: the floor a Go loop over the same queue
// pair is compared with. The caller has posted the receives and staged nothing; on return
// nothing is staged. Returns 0, an errno, -1 (the CQ failed) or -2 (a completion failed).
int vb_pingpong(uintptr_t cqh, uintptr_t qph, struct vb_pingpong *p, int64_t *rtts)
{
	struct vb_cq *c = (struct vb_cq *)cqh;
	struct vb_qp *q = (struct vb_qp *)qph;
	struct vb_wc wc[16];
	uint64_t k = 0;
	int rc = 0;
	// One clock read per round trip, as ib_send_lat's loop: the one that ends a round trip
	// starts the next.
	uint64_t t0 = p->client ? vb_now() : 0;
	for (int i = -p->warmup; i < p->iters && rc == 0; i++) {
		if (p->client) {
			if ((rc = pp_stage_send(c, q, p, k++)) != 0 || (rc = pp_await(c, q, p, wc, VB_OP_RECV)) != 0)
				break;
			uint64_t t1 = vb_now();
			if (i >= 0)
				rtts[i] = (int64_t)(t1 - t0);
			t0 = t1;
		} else if ((rc = pp_await(c, q, p, wc, VB_OP_RECV)) == 0) {
			if (p->chunk_op == VB_OP_READ && (rc = pp_stage_chunk(c, q, p)) == 0)
				rc = pp_await(c, q, p, wc, VB_OP_READ);
			else if (p->chunk_op == VB_OP_WRITE)
				rc = pp_stage_chunk(c, q, p);
			if (rc == 0)
				rc = pp_stage_send(c, q, p, k++);
		}
	}
	if (c->pending) {
		// The last receive refill (and the server's last reply): post them.
		vb_cq_poll((uintptr_t)c, (uintptr_t)wc, 16, 0);
		if (rc == 0 && c->flush_failed)
			rc = q->flush_rc ? q->flush_rc : EIO;
	}
	return rc;
}

