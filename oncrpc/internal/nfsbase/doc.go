// Package nfsbase holds what the NFS versions' requesters (packages nfs3 and nfs4) share:
// their workload presets, the statuses both define and the failure of a procedure by status,
// tables by procedure number, the decoding and walk of a directory listing's entries and the
// checks of the file a run reads. It allocates nothing on the RPC path: failures are made
// once, and a listing is walked in place.
package nfsbase
