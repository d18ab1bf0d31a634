// Package harness certifies a Host Store SPI store: it runs conform's
// store chapters (host store, long run, durable worker, exploration) over
// it and writes the reports. A store author calls Run from a plain
// `go test`, Register from their own Ginkgo suite, or builds a Command
// around their store for a `conform` command of their own.
//
// # Settings: code, environment, flags
//
// A run's settings (seed, label filter, failpoints, report directory) can
// come from three places, and one rule orders them:
//
// Under `go test` (Run, Register), the CONFORM_* environment is the
// user's run-time override and ranks above the options in the code: a
// variable that is set replaces what the code says, and CONFORM_REPRO,
// which names one run exactly, replaces the seed, the row selection and
// the failpoints. So a failure's repro line, or CONFORM_REPORT_DIR in CI,
// always takes effect, even over WithReportDir(t.TempDir()). Variables
// that disagree among themselves (CONFORM_SEED or CONFORM_LABEL_FILTER
// against CONFORM_REPRO) are refused, and Run logs the effective settings,
// each with where it came from, before the first row.
//
// For a Command, flags are the interface: a CONFORM_* variable fills a
// flag that was not given, and one that conflicts with a flag given is
// refused, with exit code 2 and one line naming both.
//
// # The exploration chapter
//
// The exploration chapter (chapter:explore) runs by default with 300
// histories. WithExplore, CONFORM_EXPLORE_HISTORIES
// or `conform run --explore-histories N` set another budget; WithoutExplore,
// CONFORM_EXPLORE_HISTORIES=0 or `--explore-histories 0` leave it out.
// `conform explore` runs it alone as a campaign. A repro that names a
// history (hist=N) plays that history alone. WithExploreParallel or
// `--explore-parallel N` plays N histories at once, each over its own
// realm, for a store whose realms share no clock.
package harness
