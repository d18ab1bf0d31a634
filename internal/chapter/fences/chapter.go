// Package fences is the conformance chapter of realm admission fences
// (label chapter:admission): rows that certify an implementation of
// admission fences across real processes. Each participant is a helper
// process, any program that speaks the helper protocol of
// docs/admission-helper-protocol.md over its stdin and stdout; by default
// the executable under test is started again as the helper (see
// ServeHelperIfRequested), which serves package admission. No row sleeps
// for ordering, each waits for the helper's answer.
//
// The catalogue of obligations is Obligations, the rows are Rows. Every
// row's spec carries the labels "row:adm-<row>" and "ob:<obligation>", and
// every failure a row reports names the obligation it breaks, in its
// message ("[adm:order] ...") and in the failure it records on its spec.
//
// The chapter runs on Linux. Rows that need an unprivileged participant
// (run as nobody, uid and gid 65534) or a mount namespace need root; run
// without it they are skipped with the reason, and reported as not
// exercised, as is a row whose helper answers "unsupported".
package fences

import (
	"os"
	"time"
)

// ProtocolVersion is the helper protocol's version, which a helper states
// in its first line ("ready PID v1").
const ProtocolVersion = "v1"

// Config is what the chapter needs at run time. The zero value runs the
// current executable as the helper in os.TempDir().
type Config struct {
	// Command is the helper: a program and its arguments, started once for
	// each participant. The program is looked up in PATH when it holds no
	// slash. Empty: the current executable, which must call
	// ServeHelperIfRequested before anything else.
	//
	// Rows that run a participant as nobody copy the program into a
	// directory nobody can reach when its own path is not; the arguments
	// (a script, say) must be readable by nobody as they are.
	Command []string
	// Env is added to the environment every helper starts with (after the
	// chapter's own environment and HelperEnv=1).
	Env []string
	// TempDir is where rows make their directories; it must be on a
	// filesystem that hosts fences. Empty: os.TempDir().
	TempDir string
	// RowTimeout bounds each row, so a hang is a failure rather than a
	// stuck run. Zero: one minute. It is a safety net, not an assertion.
	RowTimeout time.Duration
	// Repro, when set, returns the command line that runs the row with the
	// given ID again; failures print it.
	Repro func(rowID string) string
}

// HelperEnv is the environment variable that makes a process that calls
// ServeHelperIfRequested serve as the chapter's helper. The chapter sets it
// to 1 for every helper it starts, whatever its Command.
const HelperEnv = "CONFORM_ADMISSION_HELPER"

// FencesBugEnv selects a canary of the built-in helper: a deliberately
// broken implementation of fences (see Canaries). Empty: the helper serves
// package admission as it is.
const FencesBugEnv = "CONFORM_FENCES_BUG"

// UnsupportedEnv lists commands, separated by commas, that the built-in
// helper answers "unsupported", as a helper that does not offer them would.
// Empty: it offers every command.
const UnsupportedEnv = "CONFORM_ADMISSION_UNSUPPORTED"

func defaultTempDir() string { return os.TempDir() }
