//go:build linux

package fences

import (
	"os"
	"path/filepath"

	"github.com/conform-spi/conform/internal/spec"

	"github.com/conform-spi/conform/admission"
)

// The filesystem rows: a fence lives only where flock is native; a
// standalone install skips a fence elsewhere, a composed one refuses it.

func rowComposed(r *rowRun) {
	fsys, err := admission.StatFilesystem("/proc")
	r.setup(err, "statfs /proc")
	if fsys.HostsFences {
		spec.Fail("[setup] /proc hosts fences here; the row needs a filesystem that hosts none")
	}
	a := r.start("A", procOpts{})
	a.expect(ObFilesystems, "guard-try /proc", "held skipped=1", "a standalone install's guard on /proc")
	a.expect(ObFilesystems, "hold-try /proc", "held skipped=1", "a standalone install's hold on /proc")
	a.expect(ObFilesystems, "install composed", "ok", "become a composed install")
	a.expect(ObFilesystems, "guard-try /proc", unavailable(admission.CauseComposed), "a composed install's guard on /proc")
	a.expect(ObFilesystems, "hold-try /proc", unavailable(admission.CauseComposed), "a composed install's hold on /proc")
	d := r.dir()
	a.expect(ObFilesystems, "guard-try "+d, held, "a composed install's guard where fences live")
}

// rowFilesystem mounts a file of /proc over admission.lock, in a helper's
// own mount namespace: the directory hosts fences, the file does not.
func rowFilesystem(r *rowRun) {
	r.needRoot("a bind mount in a mount namespace")
	d := r.dir()
	fence := filepath.Join(d, admission.FenceFile)
	r.setup(os.WriteFile(fence, nil, 0o640), "make the fence")
	m := r.start("M", procOpts{mountNS: true})
	m.expect(ObFilesystems, "bind /proc/version "+fence, "ok", "mount a /proc file over the fence")
	m.expect(ObFilesystems, "guard-try "+d, unavailable(admission.CauseFilesystem), "a guard of a fence file on /proc")
	m.expect(ObFilesystems, "hold-try "+d, unavailable(admission.CauseFilesystem), "a hold of a fence file on /proc")
	a := r.start("A", procOpts{})
	a.expect(ObFilesystems, "guard-try "+d, held, "outside M's namespace the fence is the regular file")
}
