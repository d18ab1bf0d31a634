//go:build linux

package chapter

import (
	"os"
	"path/filepath"
	"syscall"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"golang.org/x/sys/unix"

	"github.com/conform-spi/conform/admission"
)

// admGroup is a group that neither root nor nobody is in by default (adm
// on Debian); the group rows give it to their directories.
const admGroup = 4

// fileRows: "The first participant creates a fence exclusively, mode exactly
// 0640 whatever the umask, with its directory's group ... A fence is a
// regular file with one link, opened without following a symbolic link".
func fileRows(c *Config) {
	Describe("The fence file", func() {
		It("is created with mode exactly 0640 under umask 000 and 077", Label("admission:mode"), func(ctx SpecContext) {
			for _, mask := range []string{"000", "077"} {
				d := c.dir()
				a := c.start(ctx, "A", procOpts{})
				a.expect(ctx, "umask "+mask, "ok", "set the creator's umask")
				a.expect(ctx, "guard-try "+d, held, "the creator's guard under umask "+mask)
				st := lstat(filepath.Join(d, admission.FenceFile))
				Expect(st.Mode&unix.S_IFMT).To(Equal(uint32(unix.S_IFREG)), "the fence is a regular file")
				Expect(st.Mode&0o7777).To(Equal(uint32(0o640)), "the fence's mode under umask %s", mask)
				Expect(st.Nlink).To(BeEquivalentTo(1), "the fence has one link")
			}
		}, SpecTimeout(c.RowTimeout))

		It("takes its directory's group, from a setgid directory or from its creator", Label("admission:group"), func(ctx SpecContext) {
			needRoot("giving a directory a group its creator is not in")
			for _, setgid := range []bool{true, false} {
				d := groupDir(c, setgid, 0o775)
				a := c.start(ctx, "A", procOpts{})
				a.expect(ctx, "guard-try "+d, held, "root creates the fence")
				Expect(lstat(filepath.Join(d, admission.FenceFile)).Gid).To(BeEquivalentTo(admGroup), "the fence's group (setgid directory: %v)", setgid)
			}
			// nobody is not in the group: only the setgid directory can
			// give the fence its group, and a creator that cannot set the
			// group refuses.
			d := groupDir(c, true, 0o777)
			n := c.start(ctx, "nobody", procOpts{nobody: true})
			n.expect(ctx, "guard-try "+d, held, "nobody creates a fence in a setgid directory")
			st := lstat(filepath.Join(d, admission.FenceFile))
			Expect(st.Gid).To(BeEquivalentTo(admGroup), "the group a setgid directory gives")
			Expect(st.Uid).To(BeEquivalentTo(nobody), "the fence's creator")
			Expect(st.Mode&0o7777).To(Equal(uint32(0o640)), "the fence's mode")
			n.expect(ctx, "release", released, "nobody lets go")
			d = groupDir(c, false, 0o777)
			n.expect(ctx, "guard-try "+d, unavailable(admission.CausePermissions), "nobody cannot give its new fence the directory's group")
		}, SpecTimeout(c.RowTimeout))

		It("refuses a symbolic link, a hard link, a FIFO and a directory with their causes", Label("admission:file-kinds"), func(ctx SpecContext) {
			a := c.start(ctx, "A", procOpts{})
			kinds := []struct {
				name  string
				make  func(fence string)
				cause admission.Cause
			}{
				{"a symbolic link to a good fence", func(fence string) {
					target := filepath.Join(c.dir(), "real.lock")
					Expect(os.WriteFile(target, nil, 0o640)).To(Succeed())
					Expect(os.Symlink(target, fence)).To(Succeed())
				}, admission.CauseSymlink},
				{"a hard link", func(fence string) {
					Expect(os.WriteFile(fence, nil, 0o640)).To(Succeed())
					Expect(os.Link(fence, filepath.Join(filepath.Dir(fence), "second-name"))).To(Succeed())
				}, admission.CauseLinks},
				{"a FIFO", func(fence string) { Expect(unix.Mkfifo(fence, 0o640)).To(Succeed()) }, admission.CauseNotRegular},
				{"a directory", func(fence string) { Expect(os.Mkdir(fence, 0o750)).To(Succeed()) }, admission.CauseNotRegular},
			}
			for _, k := range kinds {
				d := c.dir()
				k.make(filepath.Join(d, admission.FenceFile))
				a.expect(ctx, "guard-try "+d, unavailable(k.cause), "a guard of "+k.name)
				a.expect(ctx, "hold-try "+d, unavailable(k.cause), "a hold of "+k.name)
			}
		}, SpecTimeout(c.RowTimeout))

		It("refuses a participant the file denies", Label("admission:denied"), func(ctx SpecContext) {
			needRoot("running a participant as nobody, since root passes every permission check,")
			denied := c.dir() // root:root: the fence root creates is 0640 root:root
			allowed := c.dir()
			Expect(os.Chown(allowed, 0, nobody)).To(Succeed()) // group nogroup, which nobody is in
			a := c.start(ctx, "root", procOpts{})
			for _, d := range []string{denied, allowed} {
				a.expect(ctx, "guard-try "+d, held, "root creates the fence")
				a.expect(ctx, "release", released, "root lets go")
			}
			n := c.start(ctx, "nobody", procOpts{nobody: true})
			n.expect(ctx, "hold-try "+denied, unavailable(admission.CausePermissions), "nobody's hold of a 0640 root:root fence")
			n.expect(ctx, "guard-try "+denied, unavailable(admission.CausePermissions), "nobody's guard of a 0640 root:root fence")
			n.expect(ctx, "hold-try "+allowed, held, "nobody's hold of a fence of its own group")
			a.expect(ctx, "guard-try "+allowed, inProgress, "the fence nobody holds excludes root's guard")
		}, SpecTimeout(c.RowTimeout))
	})
}

// groupDir makes a row directory of group admGroup with the given mode,
// setgid or not.
func groupDir(c *Config, setgid bool, mode os.FileMode) string {
	GinkgoHelper()
	d := c.dir()
	Expect(os.Chown(d, 0, admGroup)).To(Succeed())
	if setgid {
		mode |= os.ModeSetgid
	}
	Expect(os.Chmod(d, mode)).To(Succeed())
	return d
}

func lstat(path string) syscall.Stat_t {
	GinkgoHelper()
	var st syscall.Stat_t
	Expect(syscall.Lstat(path, &st)).To(Succeed(), "lstat %s", path)
	return st
}
