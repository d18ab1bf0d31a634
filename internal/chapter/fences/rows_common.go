//go:build linux

package fences

import (
	"os"

	"github.com/conform-spi/conform/internal/spec"

	"github.com/conform-spi/conform/admission"
)

// The helper's answers the rows expect.
const (
	held       = "held"
	released   = "released"
	inProgress = "refused " + string(admission.CodeInProgress)
)

// unavailable is the answer of a refusal for cause c.
func unavailable(c admission.Cause) string {
	return "refused " + string(admission.CodeUnavailable) + " " + c.String()
}

// dir makes a directory for one row that every participant can traverse
// (mode 0755, also for nobody), on a filesystem that must host fences, and
// removes it when the row ends.
func (r *rowRun) dir() string {
	spec.Helper()
	d, err := os.MkdirTemp(r.c.TempDir, "admission-chapter-*")
	r.setup(err, "make a row directory")
	r.sp.DeferErr(func() error { return os.RemoveAll(d) })
	r.setup(os.Chmod(d, 0o755), "chmod the row directory")
	fsys, err := admission.StatFilesystem(d)
	r.setup(err, "statfs the row directory")
	if !fsys.HostsFences {
		spec.Fail("[setup] the chapter's TempDir " + r.c.TempDir + " must host fences; it is on " + fsys.String())
	}
	return d
}
