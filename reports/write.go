package reports

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/conform-spi/conform/internal/reportdir"
)

// writers renders each of the files of a set (reportdir.Files).
var writers = map[string]func(io.Writer, *Run) error{
	"junit.xml":   writeJUnit,
	"report.json": writeJSON,
	"report.md":   writeMarkdown,
	"report.html": writeHTML,
}

// WriteAll writes the four reports of run into dir as one set: junit.xml,
// report.json, report.md and report.html. It renders
// every report in memory first, writes them into a fresh directory beside
// dir, syncs it, and then puts that directory in dir's place in one step.
// A reader, a crash or a signal therefore sees the old set or the new set,
// never a mix, and a failed write leaves the old set untouched. dir's
// parents are created as needed. WriteAll refuses a dir that holds anything
// but reports. Leftovers of an earlier write that died are
// removed first.
func WriteAll(dir string, run *Run) error {
	if run == nil {
		return errors.New("reports: write reports: nil run")
	}
	rendered := make([][]byte, len(reportdir.Files))
	for i, name := range reportdir.Files {
		var buf bytes.Buffer
		if err := writers[name](&buf, run); err != nil {
			return fmt.Errorf("reports: render %s: %w", name, err)
		}
		rendered[i] = buf.Bytes()
	}
	return reportdir.Write(dir, rendered)
}
