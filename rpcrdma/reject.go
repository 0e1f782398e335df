package rpcrdma

import (
	"errors"
	"strconv"
	"strings"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma/wire"
)

// refuse rejects req with the cause of the failed setup as the reason, so that the
// requester can say why: the error's brief form where one in its chain has one (a
// registration under RLIMIT_MEMLOCK says the limit and the fix in a line), else its text.
func refuse(req datapath.ConnRequest, err error) {
	reason := strings.TrimPrefix(err.Error(), "rpcrdma: ")
	var b interface{ Brief() string }
	if errors.As(err, &b) {
		reason = b.Brief()
		var se *SetupError
		if errors.As(err, &se) {
			reason = se.Op + ": " + reason
		}
	}
	req.Reject(wire.EncodeRejectReason(reason))
}

// dialError turns the provider's error for a refused connection into a *RejectReasonError
// carrying what is known of the refusal.
func dialError(err error) error {
	var rej *datapath.RejectedError
	if !errors.As(err, &rej) {
		return err
	}
	e := &RejectReasonError{Status: rej.Status, Err: err}
	if r, ok := wire.DecodeRejectReason(rej.PrivateData); ok {
		e.Reason, e.Cut, e.Known = r.Text, r.Cut, true
	} else if pd, ok := wire.FindPrivateData(rej.PrivateData); ok {
		e.Peer = &pd
	}
	return e
}

// RejectReasonError is a connection the peer refused: the provider's *datapath.RejectedError
// with what is known of why.
type RejectReasonError struct {
	// Known: the peer is one of ours and gave Reason (see wire.EncodeRejectReason); Cut says
	// the reason was cut short to fit (the peer's log has all of it).
	Known  bool
	Reason string
	Cut    bool
	// Status is the transport's reject status (datapath.RejectedError.Status).
	Status int
	// Peer is an RFC 8797 message found in the reject's private data, if any: RFC 8797
	// defines none for rejects, so it says only what the peer would have offered.
	Peer *wire.PrivateData
	Err  error // the provider's error, wrapping a *datapath.RejectedError
}

func (e *RejectReasonError) Error() string {
	if e.Known {
		s := "server refused the connection: " + e.Reason
		if e.Cut {
			s += " [cut to fit the reject; the server's log has all of it]"
		}
		return s
	}
	s := e.Err.Error() + "; the peer gave no reason we can read"
	if e.Peer != nil {
		s += " (its private data holds an RFC 8797 message: send " + strconv.Itoa(e.Peer.SendSize) +
			", receive " + strconv.Itoa(e.Peer.RecvSize) + "; RFC 8797 defines no reject reason)"
	}
	return s
}

func (e *RejectReasonError) Unwrap() error { return e.Err }
