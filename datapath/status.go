package datapath

// Status is a completion status, mirroring enum ibv_wc_status. The verbs provider keeps the
// device's own value in VendorErr-style detail in its errors; the hot path only compares.
type Status uint8

const (
	StatusSuccess              Status = iota
	StatusLocalLength                 // IBV_WC_LOC_LEN_ERR: a SEND larger than the receive buffer
	StatusLocalQPOperation            // IBV_WC_LOC_QP_OP_ERR
	StatusLocalProtection             // IBV_WC_LOC_PROT_ERR: bad lkey or range
	StatusFlushed                     // IBV_WC_WR_FLUSH_ERR: the connection broke first
	StatusMWBind                      // IBV_WC_MW_BIND_ERR
	StatusRemoteInvalidRequest        // IBV_WC_REM_INV_REQ_ERR: e.g. the peer's receive too small
	StatusRemoteAccess                // IBV_WC_REM_ACCESS_ERR: bad rkey, range or rights
	StatusRemoteOperation             // IBV_WC_REM_OP_ERR
	StatusRetryExceeded               // IBV_WC_RETRY_EXC_ERR: the peer stopped answering
	StatusRNRRetryExceeded            // IBV_WC_RNR_RETRY_EXC_ERR: SEND with no receive posted
	StatusGeneral                     // IBV_WC_GENERAL_ERR and anything unmapped
)

var statusNames = [...]string{
	StatusSuccess:              "success",
	StatusLocalLength:          "local length error",
	StatusLocalQPOperation:     "local QP operation error",
	StatusLocalProtection:      "local protection error",
	StatusFlushed:              "work request flushed",
	StatusMWBind:               "memory window bind error",
	StatusRemoteInvalidRequest: "remote invalid request error",
	StatusRemoteAccess:         "remote access error",
	StatusRemoteOperation:      "remote operation error",
	StatusRetryExceeded:        "transport retry counter exceeded",
	StatusRNRRetryExceeded:     "RNR retry counter exceeded",
	StatusGeneral:              "general error",
}

func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return "unknown status"
}

// Err returns nil for StatusSuccess and a preallocated error otherwise, so the hot path can
// turn a status into an error without allocating.
func (s Status) Err() error {
	if s == StatusSuccess {
		return nil
	}
	if int(s) < len(statusErrs) {
		return statusErrs[s]
	}
	return statusErrs[StatusGeneral]
}

// StatusError is the error form of a non-success Status; errors.As finds it.
type StatusError struct{ Status Status }

func (e *StatusError) Error() string { return "completion: " + e.Status.String() }

var statusErrs = func() []error {
	errs := make([]error, len(statusNames))
	for i := range errs {
		errs[i] = &StatusError{Status(i)}
	}
	return errs
}()
