//go:build linux

package admission_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/conform-spi/conform/admission"
)

// The permissions of a fence that exists already: a participant refuses a
// fence whose mode or group is not the one its creator must give it, and
// leaves it as it is for its owner to correct; it takes a fence another
// participant created, whoever that was.

// nobodyID is the unprivileged participant: uid and gid 65534 (nobody,
// nogroup on Debian).
const nobodyID = 65534

// otherGroup is a group the test's directories do not have (adm on Debian).
const otherGroup = 4

// needRoot skips the test unless it runs as root.
func needRoot(t *testing.T, why string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip(why + " needs root (CI runs as root)")
	}
}

func TestExistingFenceOfAnotherModeIsRefusedAndLeftAlone(t *testing.T) {
	for _, mode := range []os.FileMode{0o666, 0o644, 0o660, 0o600, 0o440, 0o400, 0o640 | os.ModeSetuid, 0o640 | os.ModeSetgid, 0o640 | os.ModeSticky} {
		for name, take := range takes {
			f, _ := docIn(t)
			must(t, os.WriteFile(f.Path(), nil, 0o600))
			must(t, os.Chmod(f.Path(), mode))
			before, err := os.Lstat(f.Path())
			must(t, err)
			if err := take(admission.Install{}, f); !hasCause(err, admission.CausePermissions) {
				t.Errorf("%s of a fence of mode %v = %v; want unavailable (permissions)", name, before.Mode(), err)
			}
			after, err := os.Lstat(f.Path())
			must(t, err)
			if after.Mode() != before.Mode() || !os.SameFile(before, after) {
				t.Errorf("%s changed a refused fence: %v, now %v", name, before.Mode(), after.Mode())
			}
			// Its owner corrects it; then it is a fence like any other.
			must(t, os.Chmod(f.Path(), 0o640))
			if err := take(admission.Install{}, f); err != nil {
				t.Errorf("%s of the corrected fence = %v; want held", name, err)
			}
		}
	}
}

func TestExistingFenceOfAnotherGroupIsRefused(t *testing.T) {
	needRoot(t, "giving a fence a group other than its directory's")
	for name, take := range takes {
		f, dir := docIn(t)
		must(t, os.WriteFile(f.Path(), nil, 0o640))
		must(t, os.Chmod(f.Path(), 0o640))
		must(t, os.Chown(f.Path(), -1, otherGroup))
		if err := take(admission.Install{}, f); !hasCause(err, admission.CausePermissions) {
			t.Errorf("%s of a fence of group %d in a directory of group 0 = %v; want unavailable (permissions)", name, otherGroup, err)
		}
		if gid := statOf(t, f.Path()).Gid; gid != otherGroup {
			t.Errorf("%s changed the refused fence's group to %d", name, gid)
		}
		// The directory's group changes instead: the fence is right again.
		must(t, os.Chown(dir, -1, otherGroup))
		if err := take(admission.Install{}, f); err != nil {
			t.Errorf("%s once the directory has the fence's group = %v; want held", name, err)
		}
	}
}

func TestExistingFenceOfAnyOwnerIsTaken(t *testing.T) {
	needRoot(t, "giving a fence another owner")
	for name, take := range takes {
		f, _ := docIn(t)
		must(t, os.WriteFile(f.Path(), nil, 0o640))
		must(t, os.Chmod(f.Path(), 0o640))
		// Another participant created it: its owner, the directory's group.
		must(t, os.Chown(f.Path(), nobodyID, -1))
		if err := take(admission.Install{}, f); err != nil {
			t.Errorf("%s of a 0640 fence owned by uid %d = %v; want held", name, nobodyID, err)
		}
		must(t, os.Chmod(f.Path(), 0o666))
		if err := take(admission.Install{}, f); !hasCause(err, admission.CausePermissions) {
			t.Errorf("%s of a 0666 fence owned by uid %d = %v; want unavailable (permissions)", name, nobodyID, err)
		}
	}
}

func TestFenceWithoutPermissionsIsBeingCreated(t *testing.T) {
	// A creator makes its fence with no permission at all and gives it mode
	// 0640 once its group is right: until then the fence is in progress.
	for name, take := range takes {
		f, _ := docIn(t)
		must(t, os.WriteFile(f.Path(), nil, 0o600))
		must(t, os.Chmod(f.Path(), 0))
		if err := take(admission.Install{}, f); !admission.IsInProgress(err) {
			t.Errorf("%s of a fence of mode 0000 = %v; want in progress", name, err)
		}
	}
	f, _ := docIn(t)
	must(t, os.WriteFile(f.Path(), nil, 0o600))
	must(t, os.Chmod(f.Path(), 0))
	in := admission.Install{Waiting: func(admission.Fence) { must(t, os.Chmod(f.Path(), 0o640)) }}
	g, err := in.AcquireGuard(time.Minute, f)
	if err != nil {
		t.Fatalf("a bounded guard of a fence given mode 0640 while it waited = %v; want held", err)
	}
	must(t, g.Release())
}

// envNobodyGuard, set, makes the test binary a participant that tries a
// guard of the fence beside a document of the directory it names, prints
// its answer and exits.
const envNobodyGuard = "ADMISSION_TEST_GUARD_TRY"

func TestMain(m *testing.M) {
	if dir := os.Getenv(envNobodyGuard); dir != "" {
		fmt.Println(answerOf(admission.Install{}.TryAcquireGuard(admission.DocumentFence(filepath.Join(dir, "doc.json")))))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// answerOf returns the outcome of a take in a word or two, and releases
// a guard it took.
func answerOf(g *admission.Guard, err error) string {
	if c, ok := admission.CauseOf(err); ok {
		return "unavailable " + c.String()
	}
	switch {
	case admission.IsInProgress(err):
		return "in-progress"
	case err != nil:
		return "error " + err.Error()
	}
	if rerr := g.Release(); rerr != nil {
		return "error " + rerr.Error()
	}
	return "held"
}

// asNobody runs a guard try of dir's fence in a copy of the test binary as
// uid and gid 65534, with no supplementary group, and returns its answer.
func asNobody(t *testing.T, bin, dir string) string {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), envNobodyGuard+"="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobodyID, Gid: nobodyID, Groups: []uint32{}}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the participant as nobody: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(out))
}

// sharedDir makes a directory that nobody can reach, removed at the end.
func sharedDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "admission-nobody-*")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(d) })
	must(t, os.Chmod(d, 0o755))
	return d
}

// binaryForNobody copies the test binary where nobody can run it.
func binaryForNobody(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	must(t, err)
	src, err := os.Open(self)
	must(t, err)
	defer src.Close()
	bin := filepath.Join(sharedDir(t), "admission.test")
	dst, err := os.OpenFile(bin, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	must(t, err)
	_, err = io.Copy(dst, src)
	must(t, err)
	must(t, dst.Close())
	return bin
}

func TestRefusedCreatorLeavesNoFenceTheNextGuardTakes(t *testing.T) {
	needRoot(t, "running a participant as nobody")
	bin := binaryForNobody(t)
	dir := filepath.Join(sharedDir(t), "docs")
	must(t, os.Mkdir(dir, 0o777))
	must(t, os.Chmod(dir, 0o777)) // not setgid: the creator must set the group
	must(t, os.Chown(dir, 0, otherGroup))
	const refused = "unavailable permissions"
	if got := asNobody(t, bin, dir); got != refused {
		t.Fatalf("nobody's first guard in a directory of a group it is not in = %q; want %q", got, refused)
	}
	if got := asNobody(t, bin, dir); got != refused {
		t.Errorf("nobody's second guard there = %q; want %q, as the first", got, refused)
	}
	fence := filepath.Join(dir, admission.FenceFile)
	if err := (takes["guard"])(admission.Install{}, admission.DocumentFence(filepath.Join(dir, "doc.json"))); !hasCause(err, admission.CausePermissions) {
		t.Errorf("root's guard of the fence nobody left = %v; want unavailable (permissions)", err)
	}
	st := statOf(t, fence)
	if st.Uid != nobodyID || st.Gid == otherGroup || st.Mode&0o7777 != 0o640 {
		t.Errorf("the fence nobody left: uid %d gid %d mode %04o; want nobody's, not the directory's group, 0640", st.Uid, st.Gid, st.Mode&0o7777)
	}
	// Its owner's group is corrected (by root, here): the fence is good.
	must(t, os.Chown(fence, -1, otherGroup))
	if got := asNobody(t, bin, dir); got != "held" {
		t.Errorf("nobody's guard of the corrected fence = %q; want held", got)
	}
}

// statOf returns the lstat of path.
func statOf(t *testing.T, path string) *syscall.Stat_t {
	t.Helper()
	info, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		t.Fatal(errors.New("no stat_t"))
	}
	return st
}
