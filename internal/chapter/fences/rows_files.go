//go:build linux

package fences

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/conform-spi/conform/internal/spec"
	"golang.org/x/sys/unix"

	"github.com/conform-spi/conform/admission"
)

// admGroup is a group that neither root nor nobody is in by default (adm
// on Debian); the group rows give it to their directories.
const admGroup = 4

// The file rows: how the first participant creates a fence (mode, group),
// what a fence must be (one regular file, never a link), and who it denies.

func rowMode(r *rowRun) {
	for _, mask := range []string{"000", "077"} {
		d := r.dir()
		a := r.start("A", procOpts{})
		a.expect(ObPermissions, "umask "+mask, "ok", "set the creator's umask")
		a.expect(ObPermissions, "guard-try "+d, held, "the creator's guard under umask "+mask)
		st := r.lstat(ObFiles, filepath.Join(d, admission.FenceFile))
		r.equal(ObFiles, fmt.Sprintf("%o", st.Mode&unix.S_IFMT), fmt.Sprintf("%o", unix.S_IFREG), "the fence is a regular file")
		r.equal(ObPermissions, fmt.Sprintf("%04o", st.Mode&0o7777), "0640", "the fence's mode under umask "+mask)
		r.equal(ObFiles, st.Nlink, 1, "the fence has one link")
	}
}

func rowGroup(r *rowRun) {
	r.needRoot("giving a directory a group its creator is not in")
	for _, setgid := range []bool{true, false} {
		d := r.groupDir(setgid, 0o775)
		a := r.start("A", procOpts{})
		a.expect(ObPermissions, "guard-try "+d, held, "root creates the fence")
		r.equal(ObPermissions, r.lstat(ObPermissions, filepath.Join(d, admission.FenceFile)).Gid, admGroup, fmt.Sprintf("the fence's group (setgid directory: %v)", setgid))
	}
	// nobody is not in the group: only the setgid directory can give the
	// fence its group, and a creator that cannot set the group refuses.
	d := r.groupDir(true, 0o777)
	n := r.start("nobody", procOpts{nobody: true})
	n.expect(ObPermissions, "guard-try "+d, held, "nobody creates a fence in a setgid directory")
	st := r.lstat(ObPermissions, filepath.Join(d, admission.FenceFile))
	r.equal(ObPermissions, st.Gid, admGroup, "the group a setgid directory gives")
	r.equal(ObPermissions, st.Uid, nobody, "the fence's creator")
	r.equal(ObPermissions, fmt.Sprintf("%04o", st.Mode&0o7777), "0640", "the fence's mode")
	n.expect(ObPermissions, "release", released, "nobody lets go")
	d = r.groupDir(false, 0o777)
	n.expect(ObPermissions, "guard-try "+d, unavailable(admission.CausePermissions), "nobody cannot give its new fence the directory's group")
	// What that creator left is refused alike, by itself and by root,
	// until its owner corrects it.
	n.expect(ObPermissions, "guard-try "+d, unavailable(admission.CausePermissions), "nobody's next guard of the fence it could not give the group")
	n.expect(ObPermissions, "hold-try "+d, unavailable(admission.CausePermissions), "nobody's hold of that fence")
	a := r.start("root", procOpts{})
	a.expect(ObPermissions, "guard-try "+d, unavailable(admission.CausePermissions), "root's guard of that fence")
}

// badModes are modes a fence may be found with that its creator never
// gives it.
var badModes = []os.FileMode{0o666, 0o644, 0o660, 0o600, 0o440, 0o640 | os.ModeSetgid, 0o640 | os.ModeSticky}

func rowExistingMode(r *rowRun) {
	a := r.start("A", procOpts{})
	for _, mode := range badModes {
		d := r.dir()
		fence := filepath.Join(d, admission.FenceFile)
		r.setup(os.WriteFile(fence, nil, 0o600), "make the fence")
		r.setup(os.Chmod(fence, mode), "chmod the fence")
		want := fmt.Sprintf("%04o", r.lstat(ObPermissions, fence).Mode&0o7777)
		a.expect(ObPermissions, "guard-try "+d, unavailable(admission.CausePermissions), "a guard of a fence of mode "+want)
		a.expect(ObPermissions, "hold-try "+d, unavailable(admission.CausePermissions), "a hold of a fence of mode "+want)
		r.equal(ObPermissions, fmt.Sprintf("%04o", r.lstat(ObPermissions, fence).Mode&0o7777), want, "the refused fence's mode, left for its owner to correct")
		r.setup(os.Chmod(fence, 0o640), "correct the fence's mode")
		a.expect(ObPermissions, "guard-try "+d, held, "a guard once the owner gave the fence mode 0640")
		a.expect(ObPermissions, "release", released, "the guard lets go")
	}
}

func rowExistingGroup(r *rowRun) {
	r.needRoot("giving a fence a group other than its directory's")
	a := r.start("A", procOpts{})
	d := r.dir()
	fence := filepath.Join(d, admission.FenceFile)
	r.setup(os.WriteFile(fence, nil, 0o640), "make the fence")
	r.setup(os.Chmod(fence, 0o640), "chmod the fence")
	r.setup(os.Chown(fence, -1, admGroup), "chgrp the fence")
	a.expect(ObPermissions, "guard-try "+d, unavailable(admission.CausePermissions), "a guard of a fence of another group than its directory's")
	a.expect(ObPermissions, "hold-try "+d, unavailable(admission.CausePermissions), "a hold of that fence")
	r.equal(ObPermissions, r.lstat(ObPermissions, fence).Gid, admGroup, "the refused fence's group, left for its owner to correct")
	r.setup(os.Chown(d, -1, admGroup), "give the directory the fence's group")
	a.expect(ObPermissions, "guard-try "+d, held, "a guard once the fence has its directory's group")
	a.expect(ObPermissions, "release", released, "the guard lets go")
	// Another participant created this one, right: its owner is not ours.
	d = r.dir()
	fence = filepath.Join(d, admission.FenceFile)
	r.setup(os.WriteFile(fence, nil, 0o640), "make the fence")
	r.setup(os.Chmod(fence, 0o640), "chmod the fence")
	r.setup(os.Chown(fence, nobody, -1), "chown the fence")
	a.expect(ObPermissions, "guard-try "+d, held, "a guard of a 0640 fence of the directory's group that nobody owns")
	a.expect(ObPermissions, "release", released, "the guard lets go")
	a.expect(ObPermissions, "hold-try "+d, held, "a hold of that fence")
	a.expect(ObPermissions, "release", released, "the hold lets go")
}

func rowFileKinds(r *rowRun) {
	a := r.start("A", procOpts{})
	kinds := []struct {
		name  string
		make  func(fence string)
		cause admission.Cause
	}{
		{"a symbolic link to a good fence", func(fence string) {
			target := filepath.Join(r.dir(), "real.lock")
			r.setup(os.WriteFile(target, nil, 0o640), "make the link's target")
			r.setup(os.Symlink(target, fence), "make the link")
		}, admission.CauseSymlink},
		{"a hard link", func(fence string) {
			r.setup(os.WriteFile(fence, nil, 0o640), "make the fence")
			r.setup(os.Link(fence, filepath.Join(filepath.Dir(fence), "second-name")), "link the fence")
		}, admission.CauseLinks},
		{"a FIFO", func(fence string) { r.setup(unix.Mkfifo(fence, 0o640), "make the FIFO") }, admission.CauseNotRegular},
		{"a directory", func(fence string) { r.setup(os.Mkdir(fence, 0o750), "make the directory") }, admission.CauseNotRegular},
	}
	for _, k := range kinds {
		d := r.dir()
		k.make(filepath.Join(d, admission.FenceFile))
		a.expect(ObFiles, "guard-try "+d, unavailable(k.cause), "a guard of "+k.name)
		a.expect(ObFiles, "hold-try "+d, unavailable(k.cause), "a hold of "+k.name)
	}
}

func rowDenied(r *rowRun) {
	r.needRoot("running a participant as nobody, since root passes every permission check,")
	denied := r.dir() // root:root: the fence root creates is 0640 root:root
	allowed := r.dir()
	r.setup(os.Chown(allowed, 0, nobody), "chown the directory") // group nogroup, which nobody is in
	a := r.start("root", procOpts{})
	for _, d := range []string{denied, allowed} {
		a.expect(ObPermissions, "guard-try "+d, held, "root creates the fence")
		a.expect(ObExclusion, "release", released, "root lets go")
	}
	n := r.start("nobody", procOpts{nobody: true})
	n.expect(ObPermissions, "hold-try "+denied, unavailable(admission.CausePermissions), "nobody's hold of a 0640 root:root fence")
	n.expect(ObPermissions, "guard-try "+denied, unavailable(admission.CausePermissions), "nobody's guard of a 0640 root:root fence")
	n.expect(ObPermissions, "hold-try "+allowed, held, "nobody's hold of a fence of its own group")
	a.expect(ObExclusion, "guard-try "+allowed, inProgress, "the fence nobody holds excludes root's guard")
}

// groupDir makes a row directory of group admGroup with the given mode,
// setgid or not.
func (r *rowRun) groupDir(setgid bool, mode os.FileMode) string {
	spec.Helper()
	d := r.dir()
	r.setup(os.Chown(d, 0, admGroup), "chown the directory")
	if setgid {
		mode |= os.ModeSetgid
	}
	r.setup(os.Chmod(d, mode), "chmod the directory")
	return d
}

// lstat stats the fence a helper said it created; a missing file breaks
// ob, the rule the row checks of the file.
func (r *rowRun) lstat(ob, path string) syscall.Stat_t {
	spec.Helper()
	var st syscall.Stat_t
	err := syscall.Lstat(path, &st)
	r.check(ob, err == nil, "lstat the fence "+path, "a fence file", err)
	return st
}
