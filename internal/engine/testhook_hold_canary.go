//go:build conformcanary && unix

package engine

// Built with -tags conformcanary, the command can hold a run at one named
// moment, so that a test can signal it exactly there without sleeping.
// The shipped command has no such hook.

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// EnvTestHold is "MOMENT,OUT,IN": at MOMENT the command writes
// "reached\n" to the inherited descriptor OUT and reads one line from IN,
// as EnvTestReportDelay does. MOMENT is one of
//
//	rows-start    before the first row
//	rows-end      after the last row, before the report model is built
//	report-write  just before the reports are written
//	exit          after the exit code, the last line and the signal
//	              watch's stop, just before the command returns
const EnvTestHold = "CONFORM_TEST_HOLD"

func init() {
	v := os.Getenv(EnvTestHold)
	if v == "" {
		return
	}
	f := strings.Split(v, ",")
	if len(f) != 3 {
		panic(EnvTestHold + ": want MOMENT,OUT,IN, got " + strconv.Quote(v))
	}
	outFD, err1 := strconv.Atoi(f[1])
	inFD, err2 := strconv.Atoi(f[2])
	if err1 != nil || err2 != nil {
		panic(EnvTestHold + ": want MOMENT,OUT,IN, got " + strconv.Quote(v))
	}
	syscall.CloseOnExec(outFD)
	syscall.CloseOnExec(inFD)
	h := holdAt(outFD, inFD)
	switch f[0] {
	case "rows-start":
		beforeRows = h
	case "rows-end":
		afterRows = h
	case "report-write":
		beforeReportWrite = h
	case "exit":
		beforeExit = h
	default:
		panic(EnvTestHold + ": no moment " + strconv.Quote(f[0]))
	}
}

// holdAt returns a hook that says "reached" on outFD and waits for a line
// on inFD: "go" (or the end of the input) goes on, "after-signal" goes on
// once the command's watch noted a SIGINT or SIGTERM. It holds once.
func holdAt(outFD, inFD int) func() {
	done := false
	return func() {
		if done {
			return
		}
		done = true
		out := os.NewFile(uintptr(outFD), "hold-out")
		in := os.NewFile(uintptr(inFD), "hold-in")
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
