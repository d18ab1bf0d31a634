// Package engine is one run of conform and the conform command: the
// settings of a run and where each came from, the chapters a run holds,
// running their spec tree, collecting the typed results into the report
// model, writing the reports, repro strings, shards and merges, and the
// subcommands (run, reproduce, explore, merge, fences, list). Package
// harness is its public face for store authors; cmd/conform is a thin
// main over Command.
//
// # Signals and output
//
// The command notes SIGINT and SIGTERM rather than dying of them: the
// first ends the context the rows run under, the reports are written
// whole (RunBinary writes them before it returns, whatever signals
// follow), and the exit code is 1 with "interrupted" on stdout and
// stderr. A closed stdout fails writes with EPIPE instead of killing the
// process by SIGPIPE, so the reports are written and the exit code is
// the verdict's. Every line the command prints that carries text from
// outside goes through textsafe.Line.
package engine
