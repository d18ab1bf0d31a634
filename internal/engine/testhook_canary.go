//go:build conformcanary && unix

package engine

// Built with -tags conformcanary (the end-to-end tests of cmd/conform
// build so), the command can hold its report write, so that a test can
// signal it mid-write without sleeping. The shipped command has no such
// hook.

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// EnvTestReportDelay names two inherited file descriptors, "OUT,IN": just
// before the reports are written, the command writes "reached\n" to OUT
// and reads one line from IN. "go" (or end of file) lets the write go on;
// "after-signal" lets it go on once the command has noted a SIGINT or
// SIGTERM, so that the test knows the signal fell inside the write.
const EnvTestReportDelay = "CONFORM_TEST_REPORT_DELAY"

func init() {
	spec := os.Getenv(EnvTestReportDelay)
	if spec == "" {
		return
	}
	a, b, ok := strings.Cut(spec, ",")
	outFD, err1 := strconv.Atoi(a)
	inFD, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil {
		panic(EnvTestReportDelay + ": want OUT,IN file descriptors, got " + strconv.Quote(spec))
	}
	// The descriptors are the test's: no process the run starts inherits them.
	syscall.CloseOnExec(outFD)
	syscall.CloseOnExec(inFD)
	beforeReportWrite = func() {
		out := os.NewFile(uintptr(outFD), "report-delay-out")
		in := os.NewFile(uintptr(inFD), "report-delay-in")
		defer out.Close()
		defer in.Close()
		if _, err := out.WriteString("reached\n"); err != nil {
			return
		}
		line, _ := bufio.NewReader(in).ReadString('\n')
		if strings.TrimSpace(line) == "after-signal" {
			if ch := firstInterrupt(); ch != nil {
				<-ch
			}
		}
	}
}
