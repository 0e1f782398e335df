// Package results records, stores and compares what a benchmark run measured.
//
// Recording: each worker goroutine owns a Recorder and calls Record once per completed RPC
// (message classes, round-trip time, payload bytes), Op per RDMA operation and Fail per error;
// none of these allocate or share state. At the end of a point, Summarize merges the workers'
// recorders into a Point: HDR histograms of the round-trip times overall and per message
// class, exact min/max/mean/stdev, the percentiles the sample count supports (see Supports),
// error counts and throughput. The runner adds what it counts elsewhere: the RDMA operations
// (from the transport), the throughput time series (from its pollers' live counters), CPU.
//
// Storage: a Run (one results file) holds the config, the environment, the points and a
// status. WriteFile writes it atomically; ReadFile reads it strictly (schema version check,
// unknown fields rejected, values validated, errors naming the field). SCHEMA.md documents
// every field and its unit.
//
// Reports: WriteText, WriteCSV, WriteHlog (HdrHistogram interval log) and WriteBench (Go
// benchmark format, for benchstat) and WriteBMF (Bencher Metric Format) derive outputs from
// runs. Compare judges repeated runs of a current version against a base one, a process of
// the tool the unit: per point and metric a Hodges-Lehmann change with a Mann-Whitney
// interval, the variance components of processes and rounds, and a verdict ok, regressed or
// inconclusive by the tolerance, decided by Holm's procedure (the CI gate); BaselineFitness
// checks runs as a baseline. BestThresholds answers "which inline threshold?" the same way.
// Quality summarizes the runs' disturbances for every report.
//
// The package never imports a provider: the runner fills in what it negotiated and which
// device it used.
package results
