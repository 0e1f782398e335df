//go:build verbs && cgo

#include "shim.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>

int vb_query_device(struct ibv_context *ctx, struct vb_dev_attr *out)
{
	struct ibv_device_attr a;
	int rc = ibv_query_device(ctx, &a);
	if (rc)
		return rc;
	memset(out, 0, sizeof *out);
	out->max_mr_size = a.max_mr_size;
	out->node_guid = be64toh(a.node_guid);
	out->vendor_id = a.vendor_id;
	out->vendor_part_id = a.vendor_part_id;
	out->max_qp_wr = a.max_qp_wr;
	out->max_sge = a.max_sge;
	out->max_cqe = a.max_cqe;
	out->max_qp_rd_atom = a.max_qp_rd_atom;
	out->max_qp_init_rd_atom = a.max_qp_init_rd_atom;
	out->max_mw = a.max_mw;
	out->phys_port_cnt = a.phys_port_cnt;
	out->node_type = ctx->device->node_type;
	snprintf(out->fw_ver, sizeof out->fw_ver, "%s", a.fw_ver);
	return 0;
}

int vb_query_port(struct ibv_context *ctx, int port, struct vb_port_attr *out)
{
	struct ibv_port_attr a;
	int rc = ibv_query_port(ctx, port, &a);
	if (rc)
		return rc;
	out->state = a.state;
	switch (a.active_mtu) {
	case IBV_MTU_256: out->active_mtu = 256; break;
	case IBV_MTU_512: out->active_mtu = 512; break;
	case IBV_MTU_1024: out->active_mtu = 1024; break;
	case IBV_MTU_2048: out->active_mtu = 2048; break;
	case IBV_MTU_4096: out->active_mtu = 4096; break;
	default: out->active_mtu = 0;
	}
	out->link_layer = a.link_layer;
	out->gid_tbl_len = a.gid_tbl_len;
	return 0;
}

// vb_query_gid returns ENODATA for an empty table entry. An iWARP GID has no netdev the
// kernel reports (siw on 6.1: ibv_query_gid_ex fails reading it), so the GID alone is read
// then, of type IB and with no netdev.
int vb_query_gid(struct ibv_context *ctx, int port, int index, struct vb_gid *out)
{
	struct ibv_gid_entry e;
	int rc = ibv_query_gid_ex(ctx, port, index, &e, 0);
	if (rc && rc != ENODATA) {
		union ibv_gid g;
		if (ibv_query_gid(ctx, port, index, &g))
			return rc;
		memset(out, 0, sizeof *out);
		memcpy(out->raw, g.raw, 16);
		out->type = IBV_GID_TYPE_IB;
		return 0;
	}
	if (rc)
		return rc;
	memset(out, 0, sizeof *out);
	memcpy(out->raw, e.gid.raw, 16);
	out->type = e.gid_type;
	if (e.ndev_ifindex)
		if_indextoname(e.ndev_ifindex, out->netdev);
	return 0;
}

static struct ibv_qp *probe_qp(struct ibv_pd *pd, struct ibv_cq *cq, int inl, int *got)
{
	struct ibv_qp_init_attr qa;
	memset(&qa, 0, sizeof qa);
	qa.send_cq = cq;
	qa.recv_cq = cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = 1;
	qa.cap.max_recv_wr = 1;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	qa.cap.max_inline_data = inl;
	struct ibv_qp *qp = ibv_create_qp(pd, &qa);
	if (qp)
		*got = qa.cap.max_inline_data;
	return qp;
}

// vb_probe_inline returns the largest max_inline_data in [0, hi] an RC queue pair accepts, by
// creating queue pairs (binary search), or -errno when not even 0 works.
int vb_probe_inline(struct ibv_context *ctx, struct ibv_pd *pd, int hi)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 2, NULL, NULL, 0);
	if (!cq)
		return -errno;
	int lo = -1, best = -1, got = 0;
	while (lo < hi) {
		int mid = lo + (hi - lo + 1) / 2;
		struct ibv_qp *qp = probe_qp(pd, cq, mid, &got);
		if (qp) {
			ibv_destroy_qp(qp);
			lo = mid;
			best = got > mid ? got : mid;
		} else {
			hi = mid - 1;
		}
	}
	int err = errno;
	ibv_destroy_cq(cq);
	if (best < 0)
		return -(err ? err : EINVAL);
	return best;
}

struct vb_qp *vb_qp_alloc(int send_cap, int send_sge, int recv_cap, int recv_sge)
{
	struct vb_qp *q = calloc(1, sizeof *q);
	if (!q)
		return NULL;
	q->send_cap = send_cap;
	q->send_sge = send_sge;
	q->recv_cap = recv_cap;
	q->recv_sge = recv_sge;
	q->in = calloc(send_cap, sizeof *q->in);
	q->swr = calloc(send_cap, sizeof *q->swr);
	q->ssge = calloc((size_t)send_cap * send_sge, sizeof *q->ssge);
	q->rwr = calloc(recv_cap, sizeof *q->rwr);
	q->rsge = calloc((size_t)recv_cap * recv_sge, sizeof *q->rsge);
	q->sig = calloc(send_cap, sizeof *q->sig);
	if (!q->in || !q->swr || !q->ssge || !q->rwr || !q->rsge || !q->sig) {
		vb_qp_free(q);
		return NULL;
	}
	for (int i = 0; i < send_cap; i++)
		q->swr[i].sg_list = q->ssge + (size_t)i * send_sge;
	for (int i = 0; i < recv_cap; i++)
		q->rwr[i].sg_list = q->rsge + (size_t)i * recv_sge;
	return q;
}

void vb_qp_free(struct vb_qp *q)
{
	if (!q)
		return;
	free(q->in);
	free(q->swr);
	free(q->ssge);
	free(q->rwr);
	free(q->rsge);
	free(q->sig);
	free(q);
}

int vb_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_cq *scq, struct ibv_cq *rcq,
		 struct ibv_qp_cap *cap)
{
	struct ibv_qp_init_attr qa;
	memset(&qa, 0, sizeof qa);
	qa.send_cq = scq;
	qa.recv_cq = rcq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap = *cap;
	if (rdma_create_qp(id, pd, &qa))
		return errno ? errno : EINVAL;
	*cap = qa.cap;
	return 0;
}

static unsigned send_flags(uint8_t f)
{
	return (f & VB_FLAG_SIGNALED ? IBV_SEND_SIGNALED : 0) |
	       (f & VB_FLAG_INLINE ? IBV_SEND_INLINE : 0) | (f & VB_FLAG_FENCE ? IBV_SEND_FENCE : 0);
}

// vb_post_send posts q->in[0..n) as one chain, as far as the advertised capacity allows.
// q->posted is how many were posted (on failure, the index of the first one not posted); the
// result is 0 or an errno: ENOMEM when the queue is full.
int vb_post_send(uintptr_t qp, int n)
{
	struct vb_qp *q = (struct vb_qp *)qp;
	uint64_t room = q->send_cap - (q->sq_posted - __atomic_load_n(&q->sq_retired, __ATOMIC_ACQUIRE));
	int full = 0;
	if ((uint64_t)n > room) {
		n = (int)room;
		full = 1;
	}
	q->posted = 0;
	if (n == 0)
		return full ? ENOMEM : 0;
	uint64_t tail0 = q->sig_tail, tail = tail0;
	int binds = 0;
	for (int i = 0; i < n; i++) {
		struct vb_swr *in = &q->in[i];
		struct ibv_send_wr *w = &q->swr[i];
		w->wr_id = in->id | (uint64_t)q->slot << VB_SLOT_SHIFT;
		w->next = i + 1 < n ? &q->swr[i + 1] : NULL;
		w->num_sge = in->num_sge;
		w->send_flags = send_flags(in->flags);
		// The slot is reused: clear what an earlier work request may have left in the
		// unions (librxe refuses a bind whose imm_data/invalidate_rkey is not zero).
		w->invalidate_rkey = 0;
		w->wr.rdma.remote_addr = 0;
		w->wr.rdma.rkey = 0;
		switch (in->op) {
		case VB_OP_SEND:
			w->opcode = IBV_WR_SEND;
			break;
		case VB_OP_SEND_INV:
			w->opcode = IBV_WR_SEND_WITH_INV;
			w->invalidate_rkey = in->inv_rkey;
			break;
		case VB_OP_WRITE:
			w->opcode = IBV_WR_RDMA_WRITE;
			w->wr.rdma.remote_addr = in->remote_addr;
			w->wr.rdma.rkey = in->rkey;
			break;
		case VB_OP_READ:
			w->opcode = IBV_WR_RDMA_READ;
			w->wr.rdma.remote_addr = in->remote_addr;
			w->wr.rdma.rkey = in->rkey;
			break;
		case VB_OP_BIND_MW:
			w->opcode = IBV_WR_BIND_MW;
			w->bind_mw.mw = in->mw;
			w->bind_mw.rkey = in->rkey;
			w->bind_mw.bind_info.mr = in->mr;
			w->bind_mw.bind_info.addr = w->sg_list[0].addr;
			w->bind_mw.bind_info.length = w->sg_list[0].length;
			w->bind_mw.bind_info.mw_access_flags = in->bind_access;
			w->num_sge = 0;
			binds = 1;
			break;
		case VB_OP_LOCAL_INV:
			w->opcode = IBV_WR_LOCAL_INV;
			w->invalidate_rkey = in->inv_rkey;
			w->num_sge = 0;
			break;
		default:
			q->posted = i;
			return EINVAL;
		}
		if (in->flags & VB_FLAG_SIGNALED)
			q->sig[tail++ % q->send_cap] = q->sq_posted + i;
	}
	// Published before posting: the completion may come before ibv_post_send returns.
	__atomic_store_n(&q->sig_tail, tail, __ATOMIC_RELEASE);
	struct ibv_send_wr *badwr = NULL;
	int rc = ibv_post_send(q->qp, q->swr, &badwr);
	int posted = n;
	if (rc) {
		posted = badwr ? (int)(badwr - q->swr) : 0;
		tail = tail0; // forget the signaled ones that were not posted
		for (int i = 0; i < posted; i++)
			if (q->in[i].flags & VB_FLAG_SIGNALED)
				tail++;
		__atomic_store_n(&q->sig_tail, tail, __ATOMIC_RELEASE);
	}
	// Providers take a window's current key from ibv_mw (librxe passes it to the kernel,
	// which refuses a bind naming a stale one): a posted bind makes its key the current one.
	for (int i = 0; binds && i < posted; i++) {
		struct vb_swr *in = &q->in[i];
		if (in->op == VB_OP_BIND_MW)
			in->mw->rkey = (in->mw->rkey & ~0xffu) | (in->rkey & 0xffu);
	}
	q->sq_posted += posted;
	q->posted = posted;
	if (rc)
		return rc;
	return full ? ENOMEM : 0;
}

// vb_post_recv posts q->rwr[0..n) (wr_id, num_sge and the sg lists written by Go) as one
// chain, as far as the advertised capacity allows (ENOMEM beyond).
int vb_post_recv(uintptr_t qp, int n)
{
	struct vb_qp *q = (struct vb_qp *)qp;
	uint64_t room = q->recv_cap - (q->rq_posted - __atomic_load_n(&q->rq_done, __ATOMIC_ACQUIRE));
	int full = 0;
	if ((uint64_t)n > room) {
		n = (int)room;
		full = 1;
	}
	q->posted = 0;
	if (n == 0)
		return full ? ENOMEM : 0;
	for (int i = 0; i < n; i++) {
		q->rwr[i].wr_id |= (uint64_t)q->slot << VB_SLOT_SHIFT;
		q->rwr[i].next = i + 1 < n ? &q->rwr[i + 1] : NULL;
	}
	struct ibv_recv_wr *badwr = NULL;
	int rc = ibv_post_recv(q->qp, q->rwr, &badwr);
	int posted = rc ? (badwr ? (int)(badwr - q->rwr) : 0) : n;
	q->rq_posted += posted;
	q->posted = posted;
	if (rc)
		return rc;
	return full ? ENOMEM : 0;
}

void vb_dev_set(struct vb_dev *dev, int slot, struct vb_qp *q)
{
	__atomic_store_n(&dev->slot[slot], q, __ATOMIC_RELEASE);
}

struct vb_cq *vb_cq_open(struct vb_dev *dev, struct ibv_context *ctx, int depth, int *err)
{
	struct vb_cq *c = calloc(1, sizeof *c);
	if (!c) {
		*err = ENOMEM;
		return NULL;
	}
	c->dev = dev;
	c->ch = ibv_create_comp_channel(ctx);
	if (!c->ch) {
		*err = errno;
		free(c);
		return NULL;
	}
	int fl = fcntl(c->ch->fd, F_GETFL);
	fcntl(c->ch->fd, F_SETFL, fl | O_NONBLOCK);
	c->cq = ibv_create_cq(ctx, depth, NULL, c->ch, 0);
	if (!c->cq) {
		*err = errno;
		ibv_destroy_comp_channel(c->ch);
		free(c);
		return NULL;
	}
	return c;
}

int vb_cq_close(struct vb_cq *c)
{
	int rc = ibv_destroy_cq(c->cq);
	if (rc)
		return rc;
	ibv_destroy_comp_channel(c->ch);
	free(c);
	return 0;
}

int vb_status(int s)
{
	switch (s) {
	case IBV_WC_SUCCESS:
		return 0;
	case IBV_WC_LOC_LEN_ERR:
		return 1;
	case IBV_WC_LOC_QP_OP_ERR:
		return 2;
	case IBV_WC_LOC_PROT_ERR:
		return 3;
	case IBV_WC_WR_FLUSH_ERR:
		return 4;
	case IBV_WC_MW_BIND_ERR:
		return 5;
	case IBV_WC_REM_INV_REQ_ERR:
		return 6;
	case IBV_WC_REM_ACCESS_ERR:
		return 7;
	case IBV_WC_REM_OP_ERR:
		return 8;
	case IBV_WC_RETRY_EXC_ERR:
		return 9;
	case IBV_WC_RNR_RETRY_EXC_ERR:
		return 10;
	default:
		return 11;
	}
}

// vb_cq_flush posts what the queue pairs on c's pending list staged, receives before sends,
// and takes them off the list. A failed post is recorded in its queue pair for Go, which
// breaks the connection: the rest of what it staged is dropped. A closed (dead) queue pair is
// only taken off, so a closing CQ, on which only closed ones can be left, flushes too.
void vb_cq_flush(struct vb_cq *c)
{
	struct vb_qp *q = c->pending;
	c->pending = c->pending_tail = NULL;
	while (q) {
		struct vb_qp *next = q->pnext;
		int nr = q->staged_recv, ns = q->staged_send;
		q->pnext = NULL;
		q->staged_recv = q->staged_send = 0;
		if (!__atomic_load_n(&q->dead, __ATOMIC_ACQUIRE) && !q->flush_rc) {
			int rc = nr > 0 ? vb_post_recv((uintptr_t)q, nr) : 0;
			int send = 0;
			if (rc == 0 && ns > 0) {
				rc = vb_post_send((uintptr_t)q, ns);
				send = 1;
			}
			if (rc) {
				q->flush_rc = rc;
				q->flush_send = send;
				c->flush_failed = 1;
			}
		}
		__atomic_store_n(&q->linked, 0, __ATOMIC_RELEASE);
		q = next;
	}
}

uint64_t vb_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

// vb_cq_poll posts what is staged on c (vb_cq_flush), then moves up to max completions (at
// most VB_CQ_BATCH) into out, trying up to spin more times while the CQ is empty. It returns
// the count, or -1 when the CQ failed. Completions of destroyed queue pairs are dropped.
int vb_cq_poll(uintptr_t cq, uintptr_t outp, int max, int spin)
{
	struct vb_cq *c = (struct vb_cq *)cq;
	struct vb_wc *out = (struct vb_wc *)outp;
	if (c->probe) {
		if (c->pending && c->ret_ns) {
			uint64_t t0 = vb_now(), turn = t0 - c->ret_ns;
			vb_cq_flush(c);
			c->post_ns += vb_now() - t0;
			c->turn_ns += turn;
			if (c->turns == 0 || turn < c->turn_min)
				c->turn_min = turn;
			if (turn > c->turn_max)
				c->turn_max = turn;
			c->turn_hist[turn / VB_TURN_BUCKET_NS < VB_TURN_BUCKETS ? turn / VB_TURN_BUCKET_NS : VB_TURN_BUCKETS - 1]++;
			c->turns++;
		} else if (c->pending) {
			vb_cq_flush(c);
		}
		c->ret_ns = 0;
	} else if (c->pending) {
		vb_cq_flush(c);
	}
	if (max > VB_CQ_BATCH)
		max = VB_CQ_BATCH;
	int n, off;
	if (c->stash_n > 0) {
		off = c->stash_off;
		n = c->stash_n < max ? c->stash_n : max;
		c->stash_off += n;
		c->stash_n -= n;
	} else {
		off = 0;
		for (;;) {
			n = ibv_poll_cq(c->cq, max, c->wc);
			if (n != 0 || spin-- <= 0)
				break;
		}
		if (n < 0)
			return -1;
	}
	c->last_off = off;
	unsigned inv_flag = IBV_WC_WITH_INV | (c->rxe_inv_quirk ? VB_KERNEL_WC_WITH_INVALIDATE : 0);
	int k = 0; // completions handed out; c->wc[off + k] stays the k-th one's (vendor_err)
	for (int i = 0; i < n; i++) {
		struct ibv_wc *w = &c->wc[off + i];
		uint64_t wr_id = w->wr_id;
		struct vb_qp *q = __atomic_load_n(&c->dev->slot[(wr_id >> VB_SLOT_SHIFT) & (VB_MAX_QPS - 1)], __ATOMIC_ACQUIRE);
		// A completion of a destroyed queue pair (flushed by its destruction, or not polled
		// before it): its slot is free or another's, and its number may already be a new
		// queue pair's, which must not receive it.
		if (!q || q->qp_num != w->qp_num)
			continue;
		struct vb_wc *o = &out[k];
		if (k != i)
			c->wc[off + k] = *w;
		w = &c->wc[off + k];
		k++;
		o->id = wr_id & ((1ULL << VB_SLOT_SHIFT) - 1);
		o->op = (uint8_t)(wr_id >> VB_OP_SHIFT);
		if (o->op == VB_OP_RECV) {
			__atomic_store_n(&q->rq_done, q->rq_done + 1, __ATOMIC_RELEASE);
		} else if (w->status == IBV_WC_SUCCESS &&
			   q->sig_head < __atomic_load_n(&q->sig_tail, __ATOMIC_ACQUIRE)) {
			uint64_t pos = q->sig[q->sig_head++ % q->send_cap];
			__atomic_store_n(&q->sq_retired, pos + 1, __ATOMIC_RELEASE);
		}
		o->qpn = w->qp_num;
		o->status = (uint8_t)vb_status(w->status);
		o->byte_len = w->byte_len;
		if (w->status == IBV_WC_SUCCESS && (w->wc_flags & inv_flag)) {
			o->invalidated = 1;
			o->inv_rkey = w->invalidated_rkey;
		} else {
			o->invalidated = 0;
			o->inv_rkey = 0;
		}
	}
	if (c->probe && k > 0)
		c->ret_ns = vb_now();
	return k;
}

// vb_cq_arm requests a notification and then polls once, so a completion that arrived before
// the request is not missed; what it finds is stashed for vb_cq_poll. It returns the number
// stashed or -errno.
int vb_cq_arm(uintptr_t cq)
{
	struct vb_cq *c = (struct vb_cq *)cq;
	if (c->pending)
		vb_cq_flush(c); // nothing may stay staged while the caller sleeps
	if (c->stash_n > 0)
		return c->stash_n;
	int rc = ibv_req_notify_cq(c->cq, 0);
	if (rc)
		return -rc;
	int n = ibv_poll_cq(c->cq, VB_CQ_BATCH, c->wc);
	if (n < 0)
		return -EIO;
	c->stash_off = 0;
	c->stash_n = n;
	return n;
}

// vb_cq_event consumes one completion event (the channel fd is non-blocking): 1 if there was
// one, 0 if not.
int vb_cq_event(uintptr_t h)
{
	struct vb_cq *c = (struct vb_cq *)h;
	struct ibv_cq *cq;
	void *ctx;
	if (ibv_get_cq_event(c->ch, &cq, &ctx))
		return 0;
	ibv_ack_cq_events(cq, 1);
	return 1;
}

int vb_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return errno;
	return 0;
}

// vb_get_event takes one event from a non-blocking channel, copies what Go needs and acks it,
// so no event is ever held (rdma_destroy_id waits for held ones). Returns 0 or an errno
// (EAGAIN when there is none).
int vb_get_event(struct rdma_event_channel *ch, struct vb_event *out)
{
	struct rdma_cm_event *ev;
	if (rdma_get_cm_event(ch, &ev))
		return errno ? errno : EIO;
	memset(out, 0, sizeof *out);
	out->type = ev->event;
	out->status = ev->status;
	out->id = ev->id;
	out->listen_id = ev->listen_id;
	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
	case RDMA_CM_EVENT_ESTABLISHED:
	case RDMA_CM_EVENT_REJECTED:
		if (ev->param.conn.private_data && ev->param.conn.private_data_len) {
			int n = ev->param.conn.private_data_len;
			if (n > VB_PRIV_MAX)
				n = VB_PRIV_MAX;
			memcpy(out->priv, ev->param.conn.private_data, n);
			out->priv_len = n;
		}
		out->initiator_depth = ev->param.conn.initiator_depth;
		out->responder_resources = ev->param.conn.responder_resources;
		break;
	default:
		break;
	}
	rdma_ack_cm_event(ev);
	return 0;
}

// vb_sockaddr fills out from a numeric IPv4 or IPv6 address and a port.
int vb_sockaddr(const char *host, int port, struct sockaddr_storage *out)
{
	memset(out, 0, sizeof *out);
	struct sockaddr_in *in4 = (struct sockaddr_in *)out;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)out;
	if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons(port);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		return 0;
	}
	return EINVAL;
}

// vb_addr_string writes the address of sa into buf and returns its port (-1 if unknown).
int vb_addr_string(struct sockaddr *sa, char *buf, int len)
{
	buf[0] = 0;
	if (!sa)
		return -1;
	if (sa->sa_family == AF_INET) {
		struct sockaddr_in *in4 = (struct sockaddr_in *)sa;
		inet_ntop(AF_INET, &in4->sin_addr, buf, len);
		return ntohs(in4->sin_port);
	}
	if (sa->sa_family == AF_INET6) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)sa;
		inet_ntop(AF_INET6, &in6->sin6_addr, buf, len);
		return ntohs(in6->sin6_port);
	}
	return -1;
}

int vb_connect(struct rdma_cm_id *id, const void *priv, int len, int rd_depth, int rnr_retry)
{
	struct rdma_conn_param cp;
	memset(&cp, 0, sizeof cp);
	cp.private_data = priv;
	cp.private_data_len = len;
	cp.responder_resources = rd_depth;
	cp.initiator_depth = rd_depth;
	cp.retry_count = 7;
	cp.rnr_retry_count = rnr_retry;
	if (rdma_connect(id, &cp))
		return errno ? errno : EIO;
	return 0;
}

int vb_accept(struct rdma_cm_id *id, const void *priv, int len, int resp_res, int init_depth,
	      int rnr_retry)
{
	struct rdma_conn_param cp;
	memset(&cp, 0, sizeof cp);
	cp.private_data = priv;
	cp.private_data_len = len;
	cp.responder_resources = resp_res;
	cp.initiator_depth = init_depth;
	cp.retry_count = 7;
	cp.rnr_retry_count = rnr_retry;
	if (rdma_accept(id, &cp))
		return errno ? errno : EIO;
	return 0;
}

// vb_reg_mr takes the address as an integer: the memory is the caller's (mmap'd, outside the Go
// heap), and ibv_reg_mr is a macro cgo cannot call.
struct ibv_mr *vb_reg_mr(struct ibv_pd *pd, uintptr_t addr, size_t len, int access)
{
	return ibv_reg_mr(pd, (void *)addr, len, access);
}

// vb_set_min_rnr_timer sets the RNR NAK timer of an established (RTS) queue pair.
int vb_set_min_rnr_timer(struct ibv_qp *qp, int timer)
{
	struct ibv_qp_attr a;
	memset(&a, 0, sizeof a);
	a.min_rnr_timer = timer;
	return ibv_modify_qp(qp, &a, IBV_QP_MIN_RNR_TIMER);
}
