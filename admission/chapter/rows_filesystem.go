//go:build linux

package chapter

import (
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/conform-spi/conform/admission"
)

// filesystemRows: "A fence lives only on a local filesystem whose flock is
// native ... On any other filesystem a standalone install skips the fence
// ... A composed install ... never skips: such a fence refuses with
// ADMISSION_FENCE_UNAVAILABLE."
func filesystemRows(c *Config) {
	Describe("Filesystems", func() {
		It("skips a fence on a filesystem that hosts none for a standalone install, and refuses it for a composed one", Label("admission:composed"), func(ctx SpecContext) {
			fsys, err := admission.StatFilesystem("/proc")
			Expect(err).NotTo(HaveOccurred())
			Expect(fsys.HostsFences).To(BeFalse(), "/proc hosts no fence")
			a := c.start(ctx, "A", procOpts{})
			a.expect(ctx, "guard-try /proc", "held skipped=1", "a standalone install's guard on /proc")
			a.expect(ctx, "hold-try /proc", "held skipped=1", "a standalone install's hold on /proc")
			a.expect(ctx, "install composed", "ok", "become a composed install")
			a.expect(ctx, "guard-try /proc", unavailable(admission.CauseComposed), "a composed install's guard on /proc")
			a.expect(ctx, "hold-try /proc", unavailable(admission.CauseComposed), "a composed install's hold on /proc")
			d := c.dir()
			a.expect(ctx, "guard-try "+d, held, "a composed install's guard where fences live")
		}, SpecTimeout(c.RowTimeout))

		// A file of /proc mounted over admission.lock, in a helper's own
		// mount namespace: the directory hosts fences, the file does not.
		It("refuses a fence file on a filesystem that hosts none", Label("admission:filesystem"), func(ctx SpecContext) {
			needRoot("a bind mount in a mount namespace")
			d := c.dir()
			fence := filepath.Join(d, admission.FenceFile)
			Expect(os.WriteFile(fence, nil, 0o640)).To(Succeed())
			m := c.start(ctx, "M", procOpts{mountNS: true})
			m.expect(ctx, "bind /proc/version "+fence, "ok", "mount a /proc file over the fence")
			m.expect(ctx, "guard-try "+d, unavailable(admission.CauseFilesystem), "a guard of a fence file on /proc")
			m.expect(ctx, "hold-try "+d, unavailable(admission.CauseFilesystem), "a hold of a fence file on /proc")
			a := c.start(ctx, "A", procOpts{})
			a.expect(ctx, "guard-try "+d, held, "outside M's namespace the fence is the regular file")
		}, SpecTimeout(c.RowTimeout))
	})
}
