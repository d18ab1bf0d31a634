//go:build linux

package chapter

import (
	"os"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

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
func (c *Config) dir() string {
	GinkgoHelper()
	d, err := os.MkdirTemp(c.TempDir, "admission-chapter-*")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(os.RemoveAll, d)
	Expect(os.Chmod(d, 0o755)).To(Succeed())
	fsys, err := admission.StatFilesystem(d)
	Expect(err).NotTo(HaveOccurred())
	Expect(fsys.HostsFences).To(BeTrue(), "the chapter's TempDir %s must host fences; it is on %v", c.TempDir, fsys)
	return d
}

// needRoot skips a row that needs root, saying why; the row is then not
// exercised.
func needRoot(why string) {
	if os.Geteuid() != 0 {
		Skip("not exercised: " + why + " needs root (CI runs as root)")
	}
}
