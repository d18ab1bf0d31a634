package engine

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/conform-spi/conform/reports"
)

// MaxMergeSize bounds the report.json files one merge reads, all shards
// together: 1 GiB. Each file alone is bounded by reports.MaxJSONSize.
const MaxMergeSize = 1 << 30

// ReadReport reads a run's report.json from dir (readReportFile).
func ReadReport(dir string) (*reports.Run, error) {
	run, _, err := readReportFile(filepath.Join(dir, "report.json"))
	return run, err
}

// readReportAt reads the report.json at p, or in p when p is a directory
// (readReportFile). It returns the report, the path of the file it read
// and its size.
func readReportAt(p string) (*reports.Run, string, int64, error) {
	if fi, err := os.Stat(p); err == nil && fi.IsDir() {
		p = filepath.Join(p, "report.json")
	}
	run, size, err := readReportFile(p)
	return run, p, size, err
}

// readReportFile reads the report at path, a link to one followed. It
// refuses, before reading a byte, what is not a regular file (a device, a
// named pipe, a socket, a directory) and a file of more than
// reports.MaxJSONSize bytes; a named pipe is opened without waiting for a
// writer. It reads at most that many bytes, so a file that grows meanwhile
// is refused too. It returns the report and the file's size.
func readReportFile(path string) (*reports.Run, int64, error) {
	f, err := openNoWait(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("%s is %s, not a regular file: conform reads reports from regular files only", path, fileKind(fi.Mode()))
	}
	if fi.Size() > reports.MaxJSONSize {
		return nil, 0, fmt.Errorf("%s holds %d bytes, more than the %d MiB a report may hold", path, fi.Size(), reports.MaxJSONSize>>20)
	}
	if err := blockAgain(f); err != nil {
		return nil, 0, err
	}
	run, err := reports.ReadJSON(f)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %v", path, err)
	}
	return run, fi.Size(), nil
}

// fileKind names what a file that is not regular is.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file (" + m.Type().String() + ")"
}
