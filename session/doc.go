// Package session runs a measuring session: given the points to measure and a Connector
// that makes each point's clients, it runs the points one after the other on fresh
// connections (in interleaved rounds when repeated, each point once per round), summarises
// each into a results.Point, keeps the results file current after every point (so that
// nothing finished is lost whatever happens next), and returns the run with its final status.
//
// The Connector is where the transport comes in: package engine connects each point's
// pollers through the rpcrdma engine; tests use fakes (workloadstest). The session knows no
// transport, no program and no command-line flag.
//
// A session can add rounds until a judgement of its results is conclusive (Config.AfterRound
// with UntilConclusive): against a baseline (AgainstBaseline) or the best inline threshold
// (ThresholdsSettled), at planned looks that spend alpha (Looks, Spent). Its rounds can run
// in blocks, each in a new process of the tool (Config.Blocks, FreshProcesses), merged into
// one run with each point's process recorded.
//
// A session prints one line per point and write failures to Config.Log: the caller shows
// progress (Config.Progress, which NewProgress's line serves) and prints the table and how
// the session ended from the returned Outcome (Outcome.Print).
package session
