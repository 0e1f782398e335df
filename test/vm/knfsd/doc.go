// Package knfsd holds the interoperability test against the Linux kernel's NFS server over
// RDMA (svcrdma): software nobody on this project wrote, whose private data and replies are
// the ground truth for the rpcrdma and oncrpc codecs. It runs inside the soft-RoCE VM
// (test/vm, make vmtest), where the harness starts knfsd with an RDMA listener and sets
// KNFSD_ADDR (and KNFSD_DEVICE, the RDMA device to use, when not the first); elsewhere it
// skips.
package knfsd
