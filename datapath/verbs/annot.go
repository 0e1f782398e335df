//go:build verbs && cgo && !verbs_noannot

package verbs

// The hot calls never call back into Go and never keep the Go pointers they get (&bad, the
// caller's completion slice): saying so lets the compiler keep those on the stack (no heap
// allocation per call) and skip cgo's callback bookkeeping. Build with the tag verbs_noannot
// to measure without them (make vmtest runs BenchmarkPostPoll both ways).

/*
#cgo noescape vb_post_send
#cgo nocallback vb_post_send
#cgo noescape vb_post_recv
#cgo nocallback vb_post_recv
#cgo noescape vb_cq_poll
#cgo nocallback vb_cq_poll
#cgo noescape vb_cq_arm
#cgo nocallback vb_cq_arm
#cgo noescape vb_cq_event
#cgo nocallback vb_cq_event
#include "shim.h"
*/
import "C"
