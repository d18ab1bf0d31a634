// Package storetest holds the direct semantic tests and benchmarks that
// this module's stores (stores/sqlite, stores/appendonly, stores/postgres)
// share. They drive a store through the public SPI, and hold or crash its
// commits at the in-store sites through an injector of internal/faults that
// each test arms on its own (env.inj). They are a store
// author's own tests, not the conformance chapter: the chapter judges a
// store later, by the contract.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/faults"
)

// Config describes the store under test.
type Config struct {
	// NewFactory makes a fresh, empty realm for one test.
	NewFactory func(t testing.TB) hoststore.HostStoreFactory
	// RefusesAtCommit says the store meets obligations 4 and 5 at commit,
	// answering Conflict and FencedOut; false says it meets them at load,
	// answering Ok and hiding the batch.
	RefusesAtCommit bool
	// RefusesDeletedName says a create of a deleted scope's name returns
	// Invalid; false says the store accepts it and never shows it.
	RefusesDeletedName bool
}

// Run runs every semantic test as a subtest of t.
func Run(t *testing.T, cfg Config) {
	tests := []struct {
		name string
		fn   func(*env)
	}{
		{"acquire/empty realm supersedes nothing", testAcquireEmpty},
		{"acquire/exclusive meets a live holder, takeover supersedes it", testAcquireHeld},
		{"renew/current, lapsed, superseded and never issued", testRenew},
		{"commit/reopen shows heads, versions, commit ids and rows", testReopen},
		{"commit/a token never issued is invalid", testTokenNeverIssued},
		{"commit/a retry acts once, from the same or a new handle", testRetry},
		{"commit/a superseded writer's batch is never visible", testStaleWriter},
		{"commit/two batches for one version resolve one way everywhere", testSameVersion},
		{"commit/a batch at the size limits lands byte-exact", testSizeLimits},
		{"rows/truncate, drop and append keep stable indices", testRowsRemoval},
		{"rows/read from below the start and bad limits are invalid", testRowsInvalid},
		{"rows/delete removes head, rows and listing entry", testDelete},
		{"list/pages every visible scope once in byte order", testListing},
		{"failpoints/a held commit blocks no other scope, acquire, load or list", testHeldIndependence},
		{"failpoints/a crash before the point applies nothing, after it everything", testCrash},
		{"failpoints/a kill with a commit held leaves all or nothing", testKillHeld},
		{"concurrency/64 writers on different scopes all land", testParallelWriters},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			inj := faults.NewInjector()
			e := &env{T: t, cfg: cfg, f: cfg.NewFactory(t), inj: inj, ctx: inj.Bind(t.Context())}
			tc.fn(e)
		})
	}
}

// env is one test's realm and helpers.
type env struct {
	*testing.T
	cfg Config
	f   hoststore.HostStoreFactory
	inj *faults.Injector // the test's own; ctx carries it
	ctx context.Context
	seq int
}

// open opens a new handle, closed at the end of the test.
func (e *env) open() hoststore.HostStore {
	e.Helper()
	s, err := e.f.Open(e.ctx)
	if err != nil {
		e.Fatalf("Open: %v", err)
	}
	e.Cleanup(func() {
		if c, ok := s.(io.Closer); ok {
			if err := c.Close(); err != nil {
				e.Errorf("Close: %v", err)
			}
		}
	})
	return s
}

// writer opens a handle and takes the fence exclusively, lapsing any lease.
func (e *env) writer() (hoststore.HostStore, hoststore.FenceToken) {
	e.Helper()
	s := e.open()
	g, err := s.AcquireFence(e.ctx, hoststore.Exclusive)
	var held *hoststore.HeldError
	if errors.As(err, &held) {
		e.lapse()
		g, err = s.AcquireFence(e.ctx, hoststore.Exclusive)
	}
	if err != nil {
		e.Fatalf("AcquireFence(Exclusive): %v", err)
	}
	return s, g.Token
}

func (e *env) lapse() {
	e.Helper()
	if err := e.f.LapseFenceLeases(e.ctx); err != nil {
		e.Fatalf("LapseFenceLeases: %v", err)
	}
}

// id makes a fresh commit id.
func (e *env) id(tag string) hoststore.CommitID {
	e.seq++
	return hoststore.CommitID(fmt.Sprintf("%s-%03d", tag, e.seq))
}

func (e *env) batch(id hoststore.CommitID, tok hoststore.FenceToken, ups ...hoststore.ScopeUpdate) *hoststore.CommitBatch {
	e.Helper()
	b, err := hoststore.NewCommitBatch(id, tok, ups)
	if err != nil {
		e.Fatalf("NewCommitBatch: %v", err)
	}
	return b
}

func (e *env) commit(s hoststore.HostStore, b *hoststore.CommitBatch) {
	e.Helper()
	if err := s.Commit(e.ctx, b); err != nil {
		e.Fatalf("Commit(%s): %v", b, err)
	}
}

func (e *env) head(s hoststore.HostStore, ref hoststore.ScopeRef) *hoststore.VersionedHead {
	e.Helper()
	h, err := s.LoadHead(e.ctx, ref)
	if err != nil {
		e.Fatalf("LoadHead(%s): %v", ref, err)
	}
	return h
}

// wantHead checks the visible head of ref: nil want means absent.
func (e *env) wantHead(s hoststore.HostStore, ref hoststore.ScopeRef, want *hoststore.VersionedHead) {
	e.Helper()
	got := e.head(s, ref)
	switch {
	case want == nil && got != nil:
		e.Errorf("LoadHead(%s) = version %d by %q, want absent", ref, got.Version, got.CommitID)
	case want != nil && got == nil:
		e.Errorf("LoadHead(%s) = absent, want version %d by %q", ref, want.Version, want.CommitID)
	case want != nil && (got.Version != want.Version || got.CommitID != want.CommitID || string(got.Head) != string(want.Head)):
		e.Errorf("LoadHead(%s) = {%d %q %q}, want {%d %q %q}", ref, got.Version, got.CommitID, got.Head, want.Version, want.CommitID, want.Head)
	}
}

func (e *env) rows(s hoststore.HostStore, ref hoststore.ScopeRef, from hoststore.RowIndex, limit int) []hoststore.Row {
	e.Helper()
	rs, err := s.ReadRows(e.ctx, ref, from, limit)
	if err != nil {
		e.Fatalf("ReadRows(%s, %d, %d): %v", ref, from, limit, err)
	}
	return rs
}

// wantRows checks every visible row of ref from from: want maps index to data.
func (e *env) wantRows(s hoststore.HostStore, ref hoststore.ScopeRef, from hoststore.RowIndex, want ...string) {
	e.Helper()
	got := e.rows(s, ref, from, 1<<20)
	if len(got) != len(want) {
		e.Errorf("ReadRows(%s, %d) = %s, want %d rows %q", ref, from, rowsText(got), len(want), want)
		return
	}
	for i, r := range got {
		if r.Index != from+hoststore.RowIndex(i) || string(r.Data) != want[i] {
			e.Errorf("ReadRows(%s, %d) = %s, want %q from index %d", ref, from, rowsText(got), want, from)
			return
		}
	}
}

func rowsText(rs []hoststore.Row) string {
	out := "["
	for i, r := range rs {
		if i > 0 {
			out += " "
		}
		out += fmt.Sprintf("%d:%q", r.Index, r.Data)
	}
	return out + "]"
}

// scope builds a scope reference.
func scope(kind hoststore.ScopeKind, name string) hoststore.ScopeRef {
	return hoststore.ScopeRef{Kind: kind, Name: hoststore.ScopeName(name)}
}

// create is a creating update with a head and rows.
func create(ref hoststore.ScopeRef, head string, rows ...string) hoststore.ScopeUpdate {
	return hoststore.ScopeUpdate{Scope: ref, Next: hoststore.FirstVersion, Head: hoststore.Ptr([]byte(head)), Append: byteRows(rows)}
}

// next is an update from prev to prev+1; set further parts on the result.
func next(ref hoststore.ScopeRef, prev hoststore.ScopeVersion) hoststore.ScopeUpdate {
	return hoststore.ScopeUpdate{Scope: ref, Previous: hoststore.Ptr(prev), Next: prev + 1}
}

func withHead(u hoststore.ScopeUpdate, head string) hoststore.ScopeUpdate {
	u.Head = hoststore.Ptr([]byte(head))
	return u
}

func withRows(u hoststore.ScopeUpdate, rows ...string) hoststore.ScopeUpdate {
	u.Append = byteRows(rows)
	return u
}

func byteRows(rows []string) [][]byte {
	var out [][]byte
	for _, r := range rows {
		out = append(out, []byte(r))
	}
	return out
}

func vh(v hoststore.ScopeVersion, id hoststore.CommitID, head string) *hoststore.VersionedHead {
	return &hoststore.VersionedHead{Version: v, CommitID: id, Head: []byte(head)}
}

// kindOf names the contract kind of err for messages.
func kindOf(err error) hoststore.ErrorKind { return hoststore.KindOf(err) }
