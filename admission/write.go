package admission

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteFile writes data to path, a file covered by g. When g does not cover
// path, or was released, it returns *UncoveredError and writes nothing. It
// never writes a fence file. The data goes to a new file beside path,
// created exclusively and close-on-exec, which is synced and then renamed
// over path. A reader sees the old file or the
// new one, whole. The new file has mode perm.
func WriteFile(g *Guard, path string, data []byte, perm fs.FileMode) (err error) {
	if filepath.Base(path) == FenceFile {
		return fmt.Errorf("admission: %s is a fence file, not a document", path)
	}
	if g == nil || !g.Covers(path) {
		return &UncoveredError{Path: path}
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("admission: write %s: %w", path, err)
	}
	closed := false
	defer func() {
		if err != nil {
			// Leave nothing behind: the new file never replaced path.
			if !closed {
				err = errors.Join(err, tmp.Close())
			}
			err = errors.Join(err, os.Remove(tmp.Name()))
			err = fmt.Errorf("admission: write %s: %w", path, err)
		}
	}()
	if err := tmp.Chmod(perm); err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	closed = true
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
