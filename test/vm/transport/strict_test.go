package transport

import (
	"context"
	"errors"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

// strict wraps a device (the soft provider's, when the matrix runs without an RDMA device) so
// that work requests real devices refuse are refused here too, and the host run of the
// matrix fails where the VM run would:
//   - IDs of 1<<48 and above: datapath/verbs keeps the opcode and the queue pair's slot in
//     the top 16 bits of the verbs wr_id and rejects such IDs (datapath/verbs/doc.go);
//   - OpBindMW of zero bytes: binding a type 2 memory window to an empty range is not a
//     bind (IBTA o10-37.2.40); rxe completes it with IBV_WC_MW_BIND_ERR and the queue pair
//     goes to the error state (rxe_mw.c, rxe_check_bind_mw).
//
// The soft provider accepts both, which is why the transport's own tests over it pass.
type strict struct{ datapath.Device }

var (
	errStrictID   = errors.New("work request ID must be below 1<<48 (as with the verbs provider)")
	errStrictBind = errors.New("OpBindMW of zero bytes (a type 2 window bind needs a non-empty range: IBTA o10-37.2.40, rxe MW_BIND_ERR)")
)

const maxID = 1<<48 - 1

func (d strict) Listen(addr string) (datapath.Listener, error) {
	l, err := d.Device.Listen(addr)
	if err != nil {
		return nil, err
	}
	return strictListener{l}, nil
}

func (d strict) Connect(ctx context.Context, addr string, cfg datapath.QPConfig, priv []byte) (datapath.Conn, error) {
	c, err := d.Device.Connect(ctx, addr, cfg, priv)
	if err != nil {
		return nil, err
	}
	return strictConn{c}, nil
}

type strictListener struct{ datapath.Listener }

func (l strictListener) Accept(ctx context.Context) (datapath.ConnRequest, error) {
	r, err := l.Listener.Accept(ctx)
	if err != nil {
		return nil, err
	}
	return strictRequest{r}, nil
}

type strictRequest struct{ datapath.ConnRequest }

func (r strictRequest) Accept(cfg datapath.QPConfig, priv []byte) (datapath.Conn, error) {
	c, err := r.ConnRequest.Accept(cfg, priv)
	if err != nil {
		return nil, err
	}
	return strictConn{c}, nil
}

type strictConn struct{ datapath.Conn }

// PostSend posts the work requests before the first refused one, and reports it as a
// provider does: the count posted and the error.
func (c strictConn) PostSend(wrs []datapath.SendWR) (int, error) {
	for i := range wrs {
		w := &wrs[i]
		var err error
		switch {
		case w.ID > maxID:
			err = errStrictID
		case w.Op == datapath.OpBindMW && (len(w.SGL) == 0 || w.SGL[0].Length == 0):
			err = errStrictBind
		}
		if err != nil {
			n, perr := c.Conn.PostSend(wrs[:i])
			if perr != nil {
				return n, perr
			}
			return n, &datapath.OpError{Op: "strict: post send", Err: err}
		}
	}
	return c.Conn.PostSend(wrs)
}

func (c strictConn) PostRecv(wrs []datapath.RecvWR) (int, error) {
	for i := range wrs {
		if wrs[i].ID > maxID {
			n, perr := c.Conn.PostRecv(wrs[:i])
			if perr != nil {
				return n, perr
			}
			return n, &datapath.OpError{Op: "strict: post receive", Err: errStrictID}
		}
	}
	return c.Conn.PostRecv(wrs)
}
