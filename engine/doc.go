// Package engine is the session's Connector over the rpcrdma engine: it dials each point's
// connections over a datapath provider's device, to a server elsewhere or to a responder it
// starts in this process (Listen, which the server command uses too), sets each connection
// up with its program's Conversation (an NFSv4.1 session) and answers the server's callbacks,
// and reports what the connections negotiated and the RDMA operations they posted.
//
// It also drives a procedure measured alone over its connections (rpcproto.Measurement,
// such as NFSv4.1's delegation recall), knowing nothing of its protocol: the program's codec
// makes it, and its figures go to the point's results. Its settings are plain values
// (EngineConfig, Transport); naming the flags that set them is the caller's business.
package engine
