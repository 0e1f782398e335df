package soft

import (
	"context"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

type tcpLink struct{}

func (l *tcpLink) postSend(c *conn, wrs []datapath.SendWR) (int, error) {
	return 0, datapath.ErrNotSupported
}
func (l *tcpLink) recvPosted()    {}
func (l *tcpLink) broken(c *conn) {}

func listenTCP(d *device, addr string) (datapath.Listener, error) {
	return nil, datapath.ErrNotSupported
}

func connectTCP(ctx context.Context, d *device, addr string, cfg datapath.QPConfig, pd []byte) (datapath.Conn, error) {
	return nil, datapath.ErrNotSupported
}
