package reports

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
)

// Files are the names of the files WriteAll writes, in the order it writes
// them.
var Files = []string{"junit.xml", "report.json", "report.md", "report.html"}

// writers renders each of Files.
var writers = map[string]func(io.Writer, *Run) error{
	"junit.xml":   WriteJUnit,
	"report.json": WriteJSON,
	"report.md":   WriteMarkdown,
	"report.html": WriteHTML,
}

// WriteAll writes the four reports of run into dir, creating dir (and its
// parents) if needed. Each file is written atomically: rendered in memory,
// written to a temporary file in dir, synced, and renamed over the final
// name, so a crash leaves either the old file or the new one whole, never a
// half-written one, and no temporary file survives an error. A failure to
// write one file does not stop the others; the returned error joins one
// error per file that was not written, each naming its path.
func WriteAll(dir string, run *Run) error {
	if run == nil {
		return errors.New("reports: write reports: nil run")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("reports: write %s (and the other reports): create report dir: %w",
			filepath.Join(dir, Files[0]), err)
	}
	var errs []error
	for _, name := range Files {
		path := filepath.Join(dir, name)
		var buf bytes.Buffer
		if err := writers[name](&buf, run); err != nil {
			errs = append(errs, fmt.Errorf("reports: write %s: %w", path, err))
			continue
		}
		if err := writeAtomic(dir, name, buf.Bytes()); err != nil {
			errs = append(errs, fmt.Errorf("reports: write %s: %w", path, err))
		}
	}
	if err := syncDir(dir); err != nil {
		errs = append(errs, fmt.Errorf("reports: sync report dir %s: %w", dir, err))
	}
	return errors.Join(errs...)
}

// writeAtomic replaces dir/name with data through a synced temporary file
// in dir and a rename. On error it removes the temporary file.
func writeAtomic(dir, name string, data []byte) (err error) {
	f, err := os.CreateTemp(dir, "."+name+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			if rmErr := os.Remove(tmp); rmErr != nil && !errors.Is(rmErr, os.ErrNotExist) {
				err = errors.Join(err, fmt.Errorf("remove temporary file: %w", rmErr))
			}
		}
	}()
	if _, err = f.Write(data); err == nil {
		err = f.Chmod(0o644)
	}
	if err == nil {
		err = f.Sync()
	}
	if err = errors.Join(err, f.Close()); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, name))
}

// syncDir makes the renames in dir durable. Windows cannot sync a
// directory, and does not need to.
func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}
