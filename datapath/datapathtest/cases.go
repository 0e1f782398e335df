package datapathtest

import (
	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

// tcase is one conformance case; its halves run concurrently, possibly in two processes.
type tcase struct {
	name    string
	active  func(h *half)
	passive func(h *half)
}

const (
	send = datapath.OpSend
	recv = datapath.OpRecv
	ok   = datapath.StatusSuccess
	sig  = datapath.FlagSignaled

	rw   = datapath.AccessLocalWrite
	rrd  = datapath.AccessRemoteRead
	rwr  = datapath.AccessRemoteWrite | datapath.AccessLocalWrite
	bind = datapath.AccessMWBind
)

var cases = []tcase{
	{"PrivateData", privateDataActive, privateDataPassive},
	{"PrivateDataLimits", pdLimitsActive, pdLimitsPassive},
	{"Reject", rejectActive, rejectPassive},
	{"RejectLimits", rejectLimitsActive, rejectLimitsPassive},
	{"RejectAfterFailedAccept", rejectActive, rejectAfterFailedAcceptPassive},
	{"SendRecv", sendRecvActive, sendRecvPassive},
	{"PrepareBeforeConnected", prepareActive, preparePassive},
	{"Unsignaled", unsignaledActive, unsignaledPassive},
	{"Inline", inlineActive, inlinePassive},
	{"CQWait", cqWaitActive, cqWaitPassive},
	{"WriteThenSend", writeThenSendActive, writeThenSendPassive},
	{"Read", readActive, readPassive},
	{"TwoConnsOneCQ", twoConnsActive, twoConnsPassive},
	{"QueueFull", queueFullActive, queueFullPassive},
	{"WriteBadRKey", remoteAccessActive(datapath.OpWrite, badKey), remoteAccessPassive(rwr | rrd)},
	{"WriteOutOfRange", remoteAccessActive(datapath.OpWrite, pastEnd), remoteAccessPassive(rwr | rrd)},
	{"WriteNoAccess", remoteAccessActive(datapath.OpWrite, asIs), remoteAccessPassive(rw | rrd)},
	{"ReadBadRKey", remoteAccessActive(datapath.OpRead, badKey), remoteAccessPassive(rwr | rrd)},
	{"ReadOutOfRange", remoteAccessActive(datapath.OpRead, pastEnd), remoteAccessPassive(rwr | rrd)},
	{"ReadNoAccess", remoteAccessActive(datapath.OpRead, asIs), remoteAccessPassive(rwr)},
	{"SendTooLarge", sendTooLargeActive, sendTooLargePassive},
	{"SendNoRecv", sendNoRecvActive, sendNoRecvPassive},
	{"LocalProtection", localProtActive, localProtPassive},
	{"CloseFlushes", closeActive, closePassive},
	{"SendInvalidate", sendInvActive, sendInvPassive},
	{"MWLocalInvalidate", localInvActive, localInvPassive},
	{"MWRange", mwRangeActive, mwRangePassive},
	{"MWBindRefused", bindRefusedActive, bindRefusedPassive},
	{"PDIsolationRead", pdRemoteActive(datapath.OpRead), pdRemotePassive},
	{"PDIsolationWrite", pdRemoteActive(datapath.OpWrite), pdRemotePassive},
	{"PDIsolationLocalKey", pdLocalActive, pdLocalPassive},
	{"MWBoundToQP", mwOtherQPActive, mwOtherQPPassive},
}
