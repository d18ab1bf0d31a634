//go:build linux

package admission_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/conform-spi/conform/admission"
)

// takes are the four ways to take a fence, each without waiting.
var takes = map[string]func(admission.Install, admission.Fence) error{
	"guard": func(in admission.Install, f admission.Fence) error {
		g, err := in.TryAcquireGuard(f)
		if err == nil {
			err = g.Release()
		}
		return err
	},
	"hold": func(in admission.Install, f admission.Fence) error {
		h, err := in.TryAcquireHold(f)
		if err == nil {
			err = h.Release()
		}
		return err
	},
}

func TestFenceFilesThatAreNotOneRegularFileAreRefused(t *testing.T) {
	cases := map[string]struct {
		make func(t *testing.T, fence string)
		want admission.Cause
	}{
		"a symbolic link to a good fence": {func(t *testing.T, fence string) {
			target := filepath.Join(t.TempDir(), "real.lock")
			must(t, os.WriteFile(target, nil, 0o640))
			must(t, os.Symlink(target, fence))
		}, admission.CauseSymlink},
		"a dangling symbolic link": {func(t *testing.T, fence string) {
			must(t, os.Symlink(filepath.Join(t.TempDir(), "nothing"), fence))
		}, admission.CauseSymlink},
		"a hard link": {func(t *testing.T, fence string) {
			must(t, os.WriteFile(fence, nil, 0o640))
			must(t, os.Link(fence, filepath.Join(t.TempDir(), "second-name")))
		}, admission.CauseLinks},
		"a FIFO": {func(t *testing.T, fence string) {
			must(t, unix.Mkfifo(fence, 0o640))
		}, admission.CauseNotRegular},
		"a directory": {func(t *testing.T, fence string) {
			must(t, os.Mkdir(fence, 0o750))
		}, admission.CauseNotRegular},
	}
	for name, c := range cases {
		for mode, take := range takes {
			f, _ := docIn(t)
			c.make(t, f.Path())
			err := take(admission.Install{}, f)
			if !hasCause(err, c.want) {
				t.Errorf("%s, %s = %v; want %s", name, mode, err, c.want)
			}
		}
	}
}

func TestNewFenceIsMode0640WhateverTheUmask(t *testing.T) {
	for _, mask := range []int{0o000, 0o077, 0o027, 0o777} {
		f, _ := docIn(t)
		old := unix.Umask(mask)
		g, err := admission.Install{}.TryAcquireGuard(f)
		unix.Umask(old)
		if err != nil {
			t.Fatalf("umask %03o: %v", mask, err)
		}
		info, err := os.Lstat(f.Path())
		if err != nil || !info.Mode().IsRegular() || info.Mode().Perm() != 0o640 {
			t.Errorf("umask %03o: fence mode %v, %v; want regular 0640", mask, info.Mode(), err)
		}
		must(t, g.Release())
	}
}

func TestNewFenceTakesTheDirectorysGroup(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("giving a directory another group needs root; the chapter covers the unprivileged creator")
	}
	const group = 4 // adm: a group root is not in by default
	for _, setgid := range []bool{false, true} {
		f, dir := docIn(t)
		must(t, os.Chown(dir, 0, group))
		if setgid {
			must(t, os.Chmod(dir, 0o2775))
		}
		g, err := admission.Install{}.TryAcquireGuard(f)
		if err != nil {
			t.Fatalf("setgid %v: %v", setgid, err)
		}
		info, err := os.Lstat(f.Path())
		must(t, err)
		if gid := info.Sys().(*syscall.Stat_t).Gid; gid != group {
			t.Errorf("setgid %v: fence group %d; want the directory's %d", setgid, gid, group)
		}
		must(t, g.Release())
	}
}

func TestFilesystemsThatHostNoFence(t *testing.T) {
	f := admission.DocumentFence("/proc/doc")
	for mode, take := range takes {
		if err := take(admission.Install{Composed: true}, f); !hasCause(err, admission.CauseComposed) {
			t.Errorf("composed %s on /proc = %v; want composed-install", mode, err)
		}
	}
	g, err := admission.Install{}.TryAcquireGuard(f)
	if err != nil {
		t.Fatalf("standalone guard on /proc = %v; want skipped", err)
	}
	if s := g.Skipped(); len(s) != 1 || s[0] != f {
		t.Errorf("Skipped() = %v; want the /proc fence", s)
	}
	if !g.Covers("/proc/other") || g.Covers("/tmp/other") {
		t.Error("a skipped fence must cover its own directory only")
	}
	must(t, g.Release())
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
