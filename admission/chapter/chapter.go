// Package chapter is the conformance chapter of realm admission fences
// (label chapter:admission): Ginkgo rows that certify package admission
// across real processes. The executable under test is started again as a
// helper process (see ServeHelperIfRequested), driven over its stdin and
// stdout; no row sleeps for ordering, each waits for the helper's answer.
//
// The chapter runs on Linux. Rows that need an unprivileged participant
// (run as nobody, uid and gid 65534) or a mount namespace need root; run
// without it they are skipped with the reason, and reported as not
// exercised.
package chapter

import (
	"os"
	"time"

	. "github.com/onsi/ginkgo/v2"
)

// Label is the chapter's label; every row also carries a label of its own,
// "admission:<row>".
const ChapterLabel = "chapter:admission"

// Config is what the chapter needs at run time. The zero value runs the
// current executable as the helper in os.TempDir().
type Config struct {
	// Executable is the program started as a helper; it must call
	// ServeHelperIfRequested before anything else. Empty: os.Executable().
	Executable string
	// TempDir is where rows make their directories; it must be on a
	// filesystem that hosts fences. Empty: os.TempDir().
	TempDir string
	// RowTimeout bounds each row, so a hang is a failure rather than a
	// stuck run. Zero: one minute. It is a safety net, not an assertion.
	RowTimeout time.Duration
}

// Register adds the chapter's rows to the running Ginkgo suite, under one
// container labelled chapter:admission. Call it from a Ginkgo tree
// construction (before RunSpecs); it must not be called twice in one suite.
func Register(cfg Config) {
	c := &cfg
	if c.TempDir == "" {
		c.TempDir = os.TempDir()
	}
	if c.RowTimeout == 0 {
		c.RowTimeout = time.Minute
	}
	Describe("Realm admission fences", Label(ChapterLabel), func() {
		register(c)
	})
}

// HelperEnv is the environment variable that makes a process that calls
// ServeHelperIfRequested serve as the chapter's helper.
const HelperEnv = "CONFORM_ADMISSION_HELPER"
