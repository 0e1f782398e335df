package rpcproto

import (
	"fmt"
	"strconv"
)

// Kind is an RPC-over-RDMA message class as RFC 8166 section 3.5 names them. Heavier kinds
// have larger values, so the kind of an RPC as a whole is the max of its call's and reply's.
type Kind uint8

const (
	// Auto: no kind given; in a workload, let the requester choose from the negotiated
	// inline thresholds, as RFC 8166 section 3.5 and the Linux client do.
	Auto Kind = iota
	// Short: the whole message in one RDMA Send (RDMA_MSG, no chunks).
	Short
	// Chunked: DDP-eligible data moved by RDMA Read (Read chunk) or Write (Write chunk), the
	// rest in the Send.
	Chunked
	// Long: the whole message moved by RDMA (a Position Zero Read chunk for a call, a Reply
	// chunk or a responder-provided Read chunk for a reply; RDMA_NOMSG).
	Long

	// NumKinds is the number of kinds including Auto, for arrays indexed by Kind.
	NumKinds = 4
)

// Kinds are the kinds a message can have, lightest first.
var Kinds = [...]Kind{Short, Chunked, Long}

var kindNames = [NumKinds]string{"auto", "short", "chunked", "long"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// ParseKind parses a kind name as String writes it.
func ParseKind(s string) (Kind, error) {
	for i, n := range kindNames {
		if n == s {
			return Kind(i), nil
		}
	}
	return 0, fmt.Errorf("unknown message class %q (want short, chunked or long)", s)
}

// MarshalText writes the kind's name.
func (k Kind) MarshalText() ([]byte, error) {
	if int(k) >= len(kindNames) {
		return nil, fmt.Errorf("rpcproto: unknown message class %d", k)
	}
	return []byte(kindNames[k]), nil
}

// UnmarshalText parses a kind name.
func (k *Kind) UnmarshalText(b []byte) error {
	v, err := ParseKind(string(b))
	if err != nil {
		return err
	}
	*k = v
	return nil
}

// Class is how one RPC-over-RDMA message travels.
//
// A call can force one: ClassShort forces both the call and the reply inline;
// ClassReadChunk and ClassPosZeroRead force how the call travels; ClassWriteChunk,
// ClassReplyChunk and ClassResponderRead force how the reply travels (ClassResponderRead by
// offering no reply resources, so that a reply too large for an inline Send comes back in a
// responder-provided Read chunk). The other half is then chosen as for ClassAuto.
type Class uint8

const (
	ClassAuto Class = iota
	// ClassShort: the message goes inline in one Send (RDMA_MSG, no chunks).
	ClassShort
	// ClassReadChunk: the call's DDP-eligible data in a Read chunk, the rest inline.
	ClassReadChunk
	// ClassWriteChunk: the reply's DDP-eligible data in a Write chunk, the rest inline.
	ClassWriteChunk
	// ClassPosZeroRead: the whole call in a Position Zero Read chunk (RDMA_NOMSG).
	ClassPosZeroRead
	// ClassReplyChunk: the whole reply in the Reply chunk (RDMA_NOMSG).
	ClassReplyChunk
	// ClassResponderRead: the whole reply in a responder-provided Position Zero Read chunk
	// (RDMA_NOMSG), acknowledged by RDMA_DONE.
	ClassResponderRead

	// NumClasses is the number of classes including ClassAuto, for arrays indexed by Class.
	NumClasses = 7
)

var classNames = [NumClasses]string{"auto", "short", "read-chunk", "write-chunk", "pos0-read", "reply-chunk", "responder-read"}

func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return "class(" + strconv.Itoa(int(c)) + ")"
}

// Kind is the class's kind: the one place that folds the ways a message can travel into
// short, chunked and long.
func (c Class) Kind() Kind {
	switch c {
	case ClassShort:
		return Short
	case ClassReadChunk, ClassWriteChunk:
		return Chunked
	case ClassPosZeroRead, ClassReplyChunk, ClassResponderRead:
		return Long
	}
	return Auto
}

// Force is the class a requester forces for a procedure when a workload asks for kind k:
// chunked means the chunk of the procedure's DDP-eligible item (a Read chunk for a call's, a
// Write chunk for a reply's); long means the whole message by RDMA in the direction that
// carries the payload (a Position Zero Read chunk for a call, a Reply chunk for a reply that
// alone carries it). It returns ClassAuto for Auto and for a kind the procedure cannot have
// (the workload validates that first).
func (p *Procedure) Force(k Kind) Class {
	switch k {
	case Short:
		return ClassShort
	case Chunked:
		switch {
		case p.DDP&InCall != 0:
			return ClassReadChunk
		case p.DDP&InReply != 0:
			return ClassWriteChunk
		}
	case Long:
		if p.Payload == InReply {
			return ClassReplyChunk
		}
		return ClassPosZeroRead
	}
	return ClassAuto
}
