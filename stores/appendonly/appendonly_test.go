package appendonly_test

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"
	"github.com/conform-spi/conform/internal/faults"
	"github.com/conform-spi/conform/stores/appendonly"
)

// TestNoUpdateOrDelete keeps the store append-only: no statement in its
// source, or in the package sqlitedb it shares with stores/sqlite, updates
// or deletes a row.
func TestNoUpdateOrDelete(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	shared, err := filepath.Glob("../internal/sqlitedb/*.go")
	if err != nil || len(shared) == 0 {
		t.Fatalf("the sources of package sqlitedb: %v, %v", shared, err)
	}
	files = append(files, shared...)
	stmt := regexp.MustCompile(`(?i)\b(UPDATE\s+\w+\s+SET|DELETE\s+FROM|INSERT\s+OR\s+REPLACE|REPLACE\s+INTO|ON\s+CONFLICT)\b`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if m := stmt.Find(src); m != nil {
			t.Errorf("%s holds %q: the append-only store must never change a row", f, m)
		}
	}
}

// TestRetryAfterACrashCollapsesTheRowsWrittenTwice crashes a commit after
// its updates and rows were written but before its marker, then retries it
// from a new handle: the log holds every row twice, loads show it once.
func TestRetryAfterACrashCollapsesTheRowsWrittenTwice(t *testing.T) {
	ctx := t.Context()
	f, err := appendonly.NewRealm(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w, err := f.OpenStore(ctx)
	if err != nil {
		t.Fatal(err)
	}
	g, err := w.AcquireFence(ctx, hoststore.Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	a := hoststore.ScopeRef{Kind: hoststore.KindSession, Name: "a"}
	b, err := hoststore.NewCommitBatch("twice", g.Token, []hoststore.ScopeUpdate{
		{Scope: a, Next: 1, Head: hoststore.Ptr([]byte("h")), Append: [][]byte{[]byte("r0"), []byte("r1")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	inj := faults.NewInjector()
	inj.Claim(b.CommitID())
	h := inj.HoldAt(instore.CommitBeforePoint, nil)
	h.Crash()
	err = w.Commit(ctx, b)
	h.Disarm()
	if !errors.Is(err, instore.ErrCrashed) {
		t.Fatalf("Commit with a crash before the marker = %v, want the crash", err)
	}
	w.Kill()
	q, err := f.OpenStore(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := q.Close(); err != nil {
			t.Error(err)
		}
	}()
	if got, err := q.LoadHead(ctx, a); err != nil || got != nil {
		t.Fatalf("LoadHead before the retry = %v, %v; want absent (no marker)", got, err)
	}
	if err := q.Commit(ctx, b); err != nil {
		t.Fatalf("retry: %v", err)
	}
	if err := q.Commit(ctx, b); err != nil {
		t.Fatalf("second retry: %v", err)
	}
	rows, err := q.ReadRows(ctx, a, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || string(rows[0].Data) != "r0" || string(rows[1].Data) != "r1" || rows[1].Index != 1 {
		t.Errorf("ReadRows after a retried commit = %v, want r0, r1 once each", rows)
	}
	if got, err := q.LoadHead(ctx, a); err != nil || got == nil || got.Version != 1 || got.CommitID != "twice" {
		t.Errorf("LoadHead after the retry = %+v, %v; want version 1 by %q", got, err, "twice")
	}
}
