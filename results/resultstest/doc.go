// Package resultstest builds synthetic benchmark runs for the tests of results, plots and
// report: deterministic (a seeded RTT model, fixed timestamps) yet real, recorded through
// results.Recorder into HDR histograms and summarized by results.Summarize, so the files,
// charts and reports made from them exercise the same paths as a measured run.
//
// It is test support: nothing outside _test.go files should import it.
package resultstest
