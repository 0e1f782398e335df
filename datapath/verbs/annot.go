//go:build verbs && cgo && !verbs_noannot

package verbs

// The hot calls never call back into Go: saying so skips cgo's callback bookkeeping. (They
// take no Go pointer but an integer address, so noescape only documents that C keeps
// nothing.) Build with the tag verbs_noannot to measure without them (make vmtest runs
// BenchmarkPostPoll both ways).

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
