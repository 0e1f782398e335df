// Package benchprog is the benchmark's own ONC RPC program: its procedures, the XDR of their
// arguments and results, where their DDP-eligible data lies, and the payload pattern that
// lets either side prove it received uncorrupted bytes. Prog is the program as a workload
// names it, with its preset mixes: NFSLike, its default mix.
//
// The program, in RFC 4506 XDR language:
//
//	enum check_stat  { CHECK_SKIPPED = 0, CHECK_OK = 1, CHECK_BAD = 2 };
//	enum source_stat { SOURCE_OK = 0, SOURCE_TOOBIG = 1 };
//
//	struct sink_args   { unsigned hyper seed; bool verify; opaque data<>; };  /* data: DDP-eligible */
//	struct sink_res    { unsigned int count; check_stat check; unsigned int bad_offset; };
//	struct source_args { unsigned hyper seed; unsigned int size; bool fill; };
//	struct source_res  { source_stat stat; opaque data<>; };                  /* data: DDP-eligible */
//
//	program BENCH_PROG {
//		version BENCH_V1 {
//			void       NULL(void)          = 0;
//			opaque     ECHO(opaque<>)      = 1;  /* result = argument; not DDP-eligible */
//			sink_res   SINK(sink_args)     = 2;
//			source_res SOURCE(source_args) = 3;
//		} = 1;
//	} = 0x2f0c8166;
//
// The number 0x2f0c8166 lies in the range RFC 5531 section 7.3 leaves to users
// (0x20000000-0x3fffffff) and spells the RFC this benchmark exercises. NULL and ECHO move
// their bytes inline or, when too large, as a whole message (Position Zero Read chunk, Reply
// chunk); SINK and SOURCE carry one DDP-eligible opaque each, which a transport moves by a Read
// chunk (call) or a Write chunk (reply). Each DDP-eligible item is the last item of its body,
// so removing it (RFC 8166 section 3.4.1, "reducing an XDR stream") leaves a prefix that ends with the
// item's length word; DDPData locates it.
//
// SINK with verify set asks the server to check data against the pattern keyed by seed
// (Verify) and report the first bad byte; SOURCE with fill set asks it to write the pattern
// (Fill), so the client can check. A benchmark thus never reports speed for corrupted data.
//
// Codecs follow the conventions of package oncrpc: encode into a caller-owned []byte, decode
// into a caller-owned value whose Data is a sub-slice of the input, no allocations, errors are
// preallocated *oncrpc.XDRError values. Pad bytes are written as zeros and ignored on decode.
package benchprog
