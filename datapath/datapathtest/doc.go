// Package datapathtest is the conformance suite every datapath provider passes: the
// contract of package datapath stated as executable checks, success and failure cases alike.
//
// Each case has an active half (connects, drives) and a passive half (listens, accepts,
// answers). Run executes the halves in two goroutines of the test process, on one Device or
// on two; with Env.PeerName set it runs every passive half in a second OS process (the test
// binary re-executed, see ServePeer), so the provider is also tested across processes, and
// it finishes by killing that process with SIGKILL to check that the survivor sees a broken
// connection.
//
// Halves talk to each other only through the provider under test and through a small side
// channel (exchange) that carries keys and addresses and works as a barrier: a channel pair
// in process, the peer's stdin and stdout across processes.
//
// What the cases require of a provider beyond the interface comments, so that hardware
// passes them too: a SEND that finds no receive must fail within the case timeout (a finite
// rnr_retry_count; the soft provider waits Config.RNRTimeout); any error completion breaks
// the peer's connection as well (the verbs provider disconnects); Conn.Close flushes
// outstanding work requests into the CQs before it returns; PostSend and PostRecv beyond
// the effective Caps fail with an error wrapping datapath.ErrQueueFull; after a break a post
// either fails or completes with StatusFlushed (both are accepted). Statuses that hardware
// reports differently are checked as a set (an oversized SEND fails at the sender with a
// remote invalid request or a remote operation error); opcodes are checked only on success,
// where verbs defines them. Cases needing memory windows skip when AllocMW returns
// ErrNotSupported.
//
// Typical use, in a provider's test package:
//
//	func TestMain(m *testing.M) {
//		datapathtest.ServePeer(envByName) // returns at once unless this is a peer process
//		os.Exit(m.Run())
//	}
//
//	func TestConformance(t *testing.T) { datapathtest.Run(t, envByName("tcp")) }
package datapathtest
