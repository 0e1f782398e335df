package workloads

// NFSMix is a mix shaped like an NFS client's traffic, so one run exercises all three
// message classes at the default inline threshold of 4 KiB (and at RFC 8166's 1 KiB):
//
//	weight  procedure    size   stands for                         class at 4 KiB
//	    5   NULL            -   NULL/ping, lease renewal           short
//	   40   ECHO        128 B   GETATTR, LOOKUP, ACCESS            short
//	    5   ECHO        8 KiB   READDIR, large GETACL (no DDP)     long
//	   15   SOURCE      4 KiB   READ, small                        short or chunked
//	   10   SOURCE     32 KiB   READ                               chunked (Write chunk)
//	    5   SOURCE    256 KiB   READ, large                        chunked (Write chunk)
//	   10   SINK        4 KiB   WRITE, small                       short or chunked
//	    7   SINK       32 KiB   WRITE                              chunked (Read chunk)
//	    3   SINK      256 KiB   WRITE, large                       chunked (Read chunk)
//
// Half the RPCs are small metadata calls, as in the SPEC SFS and published NFS workload
// studies; reads outnumber writes 3:2. Whether a 4 KiB READ/WRITE goes inline depends on the
// header overhead against the threshold, which is exactly what a threshold sweep shows.
func NFSMix() []MixEntry {
	return []MixEntry{
		{Proc: ProcNull, Weight: 5},
		{Proc: ProcEcho, Weight: 40, Size: Fixed(128)},
		{Proc: ProcEcho, Weight: 5, Size: Fixed(8 << 10)},
		{Proc: ProcSource, Weight: 15, Size: Fixed(4 << 10)},
		{Proc: ProcSource, Weight: 10, Size: Fixed(32 << 10)},
		{Proc: ProcSource, Weight: 5, Size: Fixed(256 << 10)},
		{Proc: ProcSink, Weight: 10, Size: Fixed(4 << 10)},
		{Proc: ProcSink, Weight: 7, Size: Fixed(32 << 10)},
		{Proc: ProcSink, Weight: 3, Size: Fixed(256 << 10)},
	}
}

// Only is the mix of a single procedure with payload size sizes: the plain workloads
// ("echo of 4 KiB").
func Only(p Proc, sizes Sizes) []MixEntry {
	return []MixEntry{{Proc: p, Weight: 1, Size: sizes}}
}
