// Package cli is the commands' layer under cmd/rpcrdma-bench: each command's settings as
// the flags give them, checked with errors that name the flag (UsageError) and turned into
// the library's configurations. RunConfig (run, client, sweep) is planned by Prepare into a
// Measurement, which runs a session over a connector and concludes it (a sweep's class
// switches or best thresholds, a judgement's verdict); ServeConfig (server) runs through
// StartServing with a line per abnormal connection end and a summary at stop; Report, Plot
// and Compare work on results files; Devices and Version describe the build.
package cli
