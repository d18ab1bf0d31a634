// Package reportdir keeps a directory of conform's reports: it replaces the
// whole set in one step, refuses a directory that holds anything else, and
// removes what a write that died left behind. Package reports renders the
// set; this package puts it on disk.
package reportdir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
)

// Files are the names of the reports of one set, in the order Write
// writes them.
var Files = []string{"junit.xml", "report.json", "report.md", "report.html"}

// ErrForeignDir is wrapped by the error CheckDir and Write return for a
// report directory that holds files other than conform's reports. Write
// replaces the directory whole, so it never takes one over.
var ErrForeignDir = errors.New("the directory holds files that are not conform's reports")

// BeforeSwap runs after the new set is on disk and before it replaces the
// old one. Tests use it to stop a write at its most exposed point.
var BeforeSwap = func() {}

// Write puts rendered, the contents of Files in their order, into dir as
// one set. It writes them into a fresh directory beside dir, syncs it, and
// then puts that directory in dir's place in one step. A reader, a crash or
// a signal therefore sees the old set or the new set, never a mix, and a
// failed write leaves the old set untouched. dir's parents are created as
// needed. Write refuses a dir that holds anything but reports
// (ErrForeignDir). Leftovers of an earlier write that died are removed
// first.
func Write(dir string, rendered [][]byte) error {
	if len(rendered) != len(Files) {
		return fmt.Errorf("reports: write reports: %d files rendered, want %d", len(rendered), len(Files))
	}
	dir = filepath.Clean(dir)
	parent, base := filepath.Split(dir)
	if base == "." || base == ".." || base == string(filepath.Separator) || base == "" {
		return fmt.Errorf("reports: write reports: %q cannot be replaced as a directory; name one", dir)
	}
	if parent == "" {
		parent = "."
	}
	fail := func(err error) error {
		if err == nil {
			return nil
		}
		return fmt.Errorf("reports: write the reports to %s: %w", dir, err)
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fail(err)
	}
	RemoveStale(dir)
	mode := os.FileMode(0o755)
	switch fi, err := os.Stat(dir); {
	case err == nil && !fi.IsDir():
		return fail(errors.New("it is not a directory"))
	case err == nil:
		if err := ownDir(dir); err != nil {
			return fail(err)
		}
		mode = fi.Mode().Perm()
	case !errors.Is(err, os.ErrNotExist):
		return fail(err)
	}
	tmp, err := os.MkdirTemp(parent, stalePrefix(base, "new"))
	if err != nil {
		return fail(err)
	}
	keep := false
	defer func() {
		if !keep {
			os.RemoveAll(tmp)
		}
	}()
	for i, name := range Files {
		if err := writeSynced(filepath.Join(tmp, name), rendered[i]); err != nil {
			return fail(fmt.Errorf("%s: %w", name, err))
		}
	}
	if err := os.Chmod(tmp, mode); err != nil {
		return fail(err)
	}
	if err := syncDir(tmp); err != nil {
		return fail(err)
	}
	BeforeSwap()
	if err := swapDir(tmp, dir, parent, base); err != nil {
		return fail(err)
	}
	keep = true // tmp is dir now, or holds the old set and was removed
	return fail(syncDir(parent))
}

// swapDir puts directory tmp in dir's place. When dir exists, the two are
// exchanged in one step where the system can (Linux), and the old set is
// then removed; elsewhere dir is first moved aside, so that a crash between
// the two renames leaves no mix but no dir either, until the next write.
func swapDir(tmp, dir, parent, base string) error {
	err := os.Rename(tmp, dir)
	if err == nil {
		return nil
	}
	if !errors.Is(err, syscall.EEXIST) && !errors.Is(err, syscall.ENOTEMPTY) {
		return err
	}
	if ok, err := exchange(tmp, dir); ok {
		if err != nil {
			return err
		}
		return os.RemoveAll(tmp)
	}
	old, err := os.MkdirTemp(parent, stalePrefix(base, "old"))
	if err != nil {
		return err
	}
	if err := os.Remove(old); err != nil {
		return err
	}
	if err := os.Rename(dir, old); err != nil {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return errors.Join(err, os.Rename(old, dir))
	}
	return os.RemoveAll(old)
}

// stalePrefix is the name pattern of the directories a write makes beside
// dir: ".<base>.conform-<what>-<pid>-". RemoveStale finds them by it.
func stalePrefix(base, what string) string {
	return "." + base + ".conform-" + what + "-" + strconv.Itoa(os.Getpid()) + "-"
}

// RemoveStale removes what writes to dir left behind when they died: the
// directories beside dir of a process that no longer runs, and the
// temporary files of the per-file writes of conform before 0.2 inside dir.
// It returns how many it removed; it never touches anything else.
func RemoveStale(dir string) int {
	dir = filepath.Clean(dir)
	parent, base := filepath.Split(dir)
	if parent == "" {
		parent = "."
	}
	n := 0
	if es, err := os.ReadDir(parent); err == nil {
		for _, e := range es {
			rest, ok := strings.CutPrefix(e.Name(), "."+base+".conform-")
			if !ok || !e.IsDir() {
				continue
			}
			_, rest, _ = strings.Cut(rest, "-") // new or old
			pid, _, _ := strings.Cut(rest, "-")
			if p, err := strconv.Atoi(pid); err != nil || alive(p) {
				continue
			}
			if os.RemoveAll(filepath.Join(parent, e.Name())) == nil {
				n++
			}
		}
	}
	if es, err := os.ReadDir(dir); err == nil {
		for _, e := range es {
			if legacyTemp(e.Name()) && os.Remove(filepath.Join(dir, e.Name())) == nil {
				n++
			}
		}
	}
	return n
}

// legacyTemp reports whether name is a temporary file of a per-file write.
func legacyTemp(name string) bool {
	for _, f := range Files {
		if strings.HasPrefix(name, "."+f+".tmp-") {
			return true
		}
	}
	return false
}

// ownDir checks that dir holds only reports (and leftovers of their
// writes), so that replacing it loses nothing of anyone else's.
func ownDir(dir string) error {
	es, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range es {
		if !isReport(e.Name()) && !legacyTemp(e.Name()) {
			return fmt.Errorf("%w (%q, among others); name an empty or new directory", ErrForeignDir, e.Name())
		}
	}
	return nil
}

func isReport(name string) bool {
	for _, f := range Files {
		if name == f {
			return true
		}
	}
	return false
}

// CheckDir reports whether Write can write to dir, without creating or
// leaving anything: dir, if it exists, is a directory of reports only, and
// its nearest existing ancestor lets a directory be made in it.
func CheckDir(dir string) error {
	dir = filepath.Clean(dir)
	fail := func(err error) error {
		if err == nil {
			return nil
		}
		return fmt.Errorf("report dir %s: %w", dir, err)
	}
	if fi, err := os.Stat(dir); err == nil {
		if !fi.IsDir() {
			return fail(errors.New("it is not a directory"))
		}
		if err := ownDir(dir); err != nil {
			return fail(err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return fail(err)
	}
	anc := filepath.Dir(dir)
	for {
		fi, err := os.Stat(anc)
		if err == nil {
			if !fi.IsDir() {
				return fail(fmt.Errorf("%s is not a directory", anc))
			}
			break
		}
		if !errors.Is(err, os.ErrNotExist) || filepath.Dir(anc) == anc {
			return fail(err)
		}
		anc = filepath.Dir(anc)
	}
	probe, err := os.MkdirTemp(anc, ".conform-probe-")
	if err != nil {
		return fail(err)
	}
	return fail(os.Remove(probe))
}

// writeSynced writes data to a new file at path and syncs it.
func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err = f.Write(data); err == nil {
		err = f.Chmod(0o644) // whatever the umask
	}
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}

// syncDir makes the entries of dir durable. Windows cannot sync a
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
