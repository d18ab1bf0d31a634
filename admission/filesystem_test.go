//go:build linux

package admission_test

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/conform-spi/conform/admission"
)

// mountType is an oracle independent of statfs: the type of the mount that
// holds path, from /proc/self/mountinfo (the longest mount point that is a
// prefix of path's real location).
func mountType(t *testing.T, path string) string {
	t.Helper()
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		t.Fatal(err)
	}
	real, err = filepath.Abs(real)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	best, typ := "", ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		sep := -1
		for i, x := range fields {
			if x == "-" {
				sep = i
				break
			}
		}
		if len(fields) < 5 || sep < 0 || sep+1 >= len(fields) {
			continue
		}
		mp := fields[4]
		under := mp == "/" || real == mp || strings.HasPrefix(real, mp+"/")
		if under && len(mp) >= len(best) {
			best, typ = mp, fields[sep+1]
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return typ
}

// nativeFlock lists, by mountinfo type name, the Linux filesystems that
// host fences (adm:filesystems).
var nativeFlock = map[string]bool{
	"ext2": true, "ext3": true, "ext4": true, "xfs": true, "btrfs": true, "tmpfs": true,
	"ramfs": true, "f2fs": true, "overlay": true, "zfs": true, "bcachefs": true,
}

func TestPredicateAgreesWithMountinfo(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"/proc", wd, os.TempDir(), "/dev/shm"} {
		if _, err := os.Stat(dir); err != nil {
			continue
		}
		fsys, err := admission.StatFilesystem(dir)
		if err != nil {
			t.Fatalf("StatFilesystem(%s): %v", dir, err)
		}
		typ := mountType(t, dir)
		if fsys.HostsFences != nativeFlock[typ] {
			t.Errorf("%s: predicate says %v; mountinfo says %s", dir, fsys, typ)
		}
	}
}

func TestPredicateNamesKnownFilesystems(t *testing.T) {
	fsys, err := admission.StatFilesystem("/proc")
	if err != nil || fsys.Name != "proc" || fsys.Magic != 0x9fa0 || fsys.HostsFences {
		t.Errorf("/proc = %v, %v; want proc (0x9fa0), hosts no fence", fsys, err)
	}
	if _, err := admission.StatFilesystem(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("StatFilesystem of a missing directory succeeded")
	}
}
