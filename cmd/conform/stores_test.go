package main

import (
	"context"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/engine"
)

// fileOpeners are the file-backed stores' openers by scheme.
var fileOpeners = map[string]func() engine.Opener{
	"sqlite":            openSQLite,
	"appendonly+sqlite": openAppendOnly,
}

// fillRealm opens a handle over f, takes the fence, commits one batch so
// that the realm's file holds data, and closes the handle.
func fillRealm(t *testing.T, f hoststore.HostStoreFactory) {
	t.Helper()
	s, err := f.Open(t.Context())
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	g, err := s.AcquireFence(t.Context(), hoststore.Exclusive)
	if err != nil {
		t.Fatalf("AcquireFence: %v", err)
	}
	ref := hoststore.ScopeRef{Kind: hoststore.KindRecord, Name: "r"}
	b, err := hoststore.NewCommitBatch("c1", g.Token, []hoststore.ScopeUpdate{{
		Scope: ref, Next: hoststore.FirstVersion, Head: hoststore.Ptr([]byte("h")), Append: [][]byte{[]byte("row")},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(t.Context(), b); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	if err := s.(io.Closer).Close(); err != nil {
		t.Fatalf("closing the handle: %v", err)
	}
}

// entries returns the names in dir.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// TestTempRealmsLeaveNothing: with an empty DIR each realm gets a
// temporary directory of its own, and Close (twice) removes it, so $TMPDIR
// is left as it was.
func TestTempRealmsLeaveNothing(t *testing.T) {
	for scheme, opener := range fileOpeners {
		t.Run(scheme, func(t *testing.T) {
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			nr, err := opener()(t.Context(), scheme+":")
			if err != nil {
				t.Fatalf("opener: %v", err)
			}
			var dirs []string
			for range 2 {
				f, err := nr(t.Context())
				if err != nil {
					t.Fatalf("new realm: %v", err)
				}
				tr, ok := f.(*tempRealm)
				if !ok {
					t.Fatalf("the realm is a %T, want a *tempRealm", f)
				}
				if _, ok := f.(io.Closer); !ok {
					t.Fatal("the realm's factory has no Close")
				}
				dirs = append(dirs, tr.dir)
				fillRealm(t, f)
				if names := entries(t, tr.dir); len(names) == 0 {
					t.Fatalf("the realm's directory %s is empty before Close", tr.dir)
				}
				for i := range 2 {
					if err := tr.Close(); err != nil {
						t.Errorf("Close %d: %v", i+1, err)
					}
				}
				if _, err := os.Stat(tr.dir); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("the realm's directory after Close: %v, want it gone", err)
				}
			}
			if dirs[0] == dirs[1] {
				t.Errorf("two realms share the directory %s", dirs[0])
			}
			if names := entries(t, tmp); len(names) != 0 {
				t.Errorf("$TMPDIR holds %q after the realms were closed, want nothing", names)
			}
		})
	}
}

// TestTempRealmFailureLeavesNothing: a realm that cannot be made leaves no
// temporary directory behind.
func TestTempRealmFailureLeavesNothing(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	refused := errors.New("refused")
	_, err := newTempRealm(t.Context(), "conform-test-*", func(context.Context, string) (hoststore.HostStoreFactory, error) {
		return nil, refused
	})
	if !errors.Is(err, refused) {
		t.Fatalf("newTempRealm = %v, want the store's error", err)
	}
	if names := entries(t, tmp); len(names) != 0 {
		t.Errorf("$TMPDIR holds %q after a refused realm, want nothing", names)
	}
}

// TestDirRealmsRemovedDirKept: with a DIR given, Close removes the realm's
// files and DIR stays.
func TestDirRealmsRemovedDirKept(t *testing.T) {
	for scheme, opener := range fileOpeners {
		t.Run(scheme, func(t *testing.T) {
			dir := t.TempDir()
			nr, err := opener()(t.Context(), scheme+":"+dir)
			if err != nil {
				t.Fatalf("opener: %v", err)
			}
			f, err := nr(t.Context())
			if err != nil {
				t.Fatalf("new realm: %v", err)
			}
			fillRealm(t, f)
			if names := entries(t, dir); len(names) == 0 {
				t.Fatal("DIR is empty before Close")
			}
			c, ok := f.(io.Closer)
			if !ok {
				t.Fatalf("the realm's factory %T has no Close", f)
			}
			if err := c.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			if names := entries(t, dir); len(names) != 0 {
				t.Errorf("DIR holds %q after Close, want nothing", names)
			}
		})
	}
}
