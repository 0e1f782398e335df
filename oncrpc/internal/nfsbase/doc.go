// Package nfsbase holds what the NFS versions' requesters (packages nfs3 and nfs4) share:
// their workload presets, the failure of a procedure by status, the walk of a directory
// listing's entries and the checks of the file a run reads. It allocates nothing on the RPC
// path: failures are made once, and a listing is walked in place.
package nfsbase
