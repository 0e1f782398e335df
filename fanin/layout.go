package fanin

import (
	"fmt"
	"slices"
)

// Role is what a rank does in a fan-in.
type Role string

const (
	// RoleServer serves the benchmark program to client ranks.
	RoleServer Role = "server"
	// RoleClient measures: it drives its server and reports its points to rank 0.
	RoleClient Role = "client"
)

// Layout gives every rank of a job its role and each client rank its server rank. Every rank
// computes it from the same flags, so it needs no exchange.
type Layout struct {
	size     int
	servers  []int // sorted
	pairs    bool
	external bool
}

// ExternalLayout is the layout of size ranks that all measure a server outside the job (an
// NFS server, say): no rank serves.
func ExternalLayout(size int) Layout { return Layout{size: size, external: true} }

// NewLayout is the layout of size ranks: with pairs, rank 2k serves rank 2k+1 (a link each);
// otherwise serverRanks serve (none given: rank 0) and the client ranks are dealt to them
// round-robin in rank order.
func NewLayout(size int, serverRanks []int, pairs bool) (Layout, error) {
	if size < 2 {
		return Layout{}, fmt.Errorf("a fan-in needs at least 2 ranks (a server and a client), the job has %d: launch it with mpirun -np N", size)
	}
	if pairs {
		if len(serverRanks) > 0 {
			return Layout{}, fmt.Errorf("--pairs makes the even ranks the servers: it takes no --server-ranks")
		}
		if size%2 != 0 {
			return Layout{}, fmt.Errorf("--pairs pairs rank 2k with rank 2k+1: the job has %d ranks, an odd number", size)
		}
		return Layout{size: size, pairs: true}, nil
	}
	if len(serverRanks) == 0 {
		serverRanks = []int{0}
	}
	s := slices.Clone(serverRanks)
	slices.Sort(s)
	for i, r := range s {
		if r < 0 || r >= size {
			return Layout{}, fmt.Errorf("--server-ranks: rank %d is not in the job (ranks 0 to %d)", r, size-1)
		}
		if i > 0 && r == s[i-1] {
			return Layout{}, fmt.Errorf("--server-ranks: rank %d listed twice", r)
		}
	}
	if len(s) >= size {
		return Layout{}, fmt.Errorf("--server-ranks: all %d ranks serve, none is left to measure", size)
	}
	return Layout{size: size, servers: s}, nil
}

// Size is the number of ranks.
func (l Layout) Size() int { return l.size }

// Role is rank r's role.
func (l Layout) Role(r int) Role {
	if l.external {
		return RoleClient
	}
	if l.pairs {
		if r%2 == 0 {
			return RoleServer
		}
		return RoleClient
	}
	if slices.Contains(l.servers, r) {
		return RoleServer
	}
	return RoleClient
}

// Servers and Clients are the ranks of each role, in rank order.
func (l Layout) Servers() []int { return l.ranks(RoleServer) }
func (l Layout) Clients() []int { return l.ranks(RoleClient) }

func (l Layout) ranks(role Role) []int {
	var rs []int
	for r := range l.size {
		if l.Role(r) == role {
			rs = append(rs, r)
		}
	}
	return rs
}

// ServerOf is the server rank of client rank r, -1 when the server is outside the job.
func (l Layout) ServerOf(r int) int {
	if l.external {
		return -1
	}
	if l.pairs {
		return r - 1
	}
	return l.servers[slices.Index(l.Clients(), r)%len(l.servers)]
}
