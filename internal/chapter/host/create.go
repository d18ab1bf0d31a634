package host

import (
	"context"
	"fmt"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/chapter"
	"github.com/conform-spi/conform/reference"
)

// createOverExisting is the same-version row's spec for a create (Previous
// nil) of a name that exists. At the name's first version it is a second
// batch for that version, judged as twins are. At a later version the
// create is judged on its own: refused with a Conflict that names the
// scope and its current version, with nothing applied; or answered Ok and
// resolved at load, wholly hidden, or shown wholly with the batch that held
// the name's first version gone from every scope it wrote.
func (e *env) createOverExisting(ctx context.Context) {
	w := e.Writer(ctx)
	a := e.Scope(hoststore.KindRecord, "exists/a")
	b := e.Scope(hoststore.KindRecord, "exists/b")
	c := e.Scope(hoststore.KindRecord, "exists/c")
	e.Note("x creates a and b; y then creates c, and a again: two batches for the first version of a")
	x := e.Batch(w, "x", e.Up(a, chapter.WithHead([]byte("a-by-x")), chapter.WithAppend([]byte("x0"))), e.Up(b, chapter.WithHead([]byte("b-by-x"))))
	y := e.Batch(w, "y", e.Up(c, chapter.WithHead([]byte("c-by-y"))), e.Up(a, chapter.WithHead([]byte("a-by-y")), chapter.WithAppend([]byte("y0"), []byte("y1"))))
	ex := w.Commit(ctx, x)
	ey := w.Commit(ctx, y)
	if ex == nil {
		e.checkConflictNames(ey, y, a, hoststore.FirstVersion)
	}
	e.judgeTwins(ctx, x, y, ex, ey, nil)

	w = e.Writer(ctx)
	a2 := e.Scope(hoststore.KindRecord, "exists/later/a")
	b2 := e.Scope(hoststore.KindRecord, "exists/later/b")
	d2 := e.Scope(hoststore.KindRecord, "exists/later/d")
	e.Commit(ctx, w, e.Batch(w, "later-setup", e.Up(a2, chapter.WithHead([]byte("a1")), chapter.WithAppend([]byte("a1-0"))), e.Up(b2, chapter.WithHead([]byte("b1")))), chapter.ObDurable)
	e.Commit(ctx, w, e.Batch(w, "later-2", e.Up(a2, chapter.WithHead([]byte("a2")), chapter.WithAppend([]byte("a2-0"))), e.Up(b2, chapter.WithHead([]byte("b2")))), chapter.ObDurable)
	e.Note("a stands at version 2; z creates d, and a again")
	z := e.Batch(w, "z", e.Up(d2, chapter.WithHead([]byte("d-by-z"))), chapter.UpFrom(a2, nil, chapter.WithHead([]byte("a-by-z")), chapter.WithAppend([]byte("z0"))))
	ez := w.Commit(ctx, z)
	k := hoststore.KindOf(ez)
	if ez != nil && k != hoststore.ErrKindConflict && k != hoststore.ErrKindIndeterminate {
		e.Fail(chapter.ObOperations, fmt.Sprintf("a create of %s, which exists, answered neither Conflict nor Ok", a2), "Conflict, or Ok when the store resolves versions at load", chapter.ErrText(ez))
	}
	e.checkConflictNames(ez, z, a2, e.Model.Head(a2).Version)
	shown := e.showsAlike(ctx, z, k == hoststore.ErrKindConflict)
	if !shown {
		e.CheckScopes(ctx, w, chapter.ObVersionChain, a2, b2, d2)
		return
	}
	e.Note("z shows: the store gave the first version of a to z, so the batch that held it must be gone from b as well")
	got, err := w.Load(ctx, b2)
	if err != nil {
		e.Fail(chapter.ObOperations, fmt.Sprintf("LoadHead(%s) failed", b2), "no head", chapter.ErrText(err))
	}
	if got != nil {
		e.Fail(chapter.ObVersionChain, fmt.Sprintf("the create %q of %s won its first version, yet %s still shows the chain of the batch that lost it", z.CommitID(), a2, b2),
			"the losing batch gone from every scope it wrote", fmt.Sprintf("v%d %q", got.Version, got.CommitID))
	}
}

// checkConflictNames checks a Conflict that refused b: it names scope s,
// the update whose Previous did not match, and s's current version cur.
// Any other answer is not its business.
func (e *env) checkConflictNames(err error, b *hoststore.CommitBatch, s hoststore.ScopeRef, cur hoststore.ScopeVersion) {
	var ce *hoststore.ConflictError
	if !asErr(err, &ce) {
		return
	}
	if ce.Scope != s || ce.Current == nil || *ce.Current != cur {
		e.Fail(chapter.ObOperations, fmt.Sprintf("the Conflict that refused %q does not name the scope that exists and its version", b.CommitID()),
			fmt.Sprintf("Conflict{%s, Current v%d}", s, cur), fmt.Sprintf("Conflict{%s, Current %s}", ce.Scope, versionText(ce.Current)))
	}
}

func versionText(v *hoststore.ScopeVersion) string {
	if v == nil {
		return "nil"
	}
	return fmt.Sprintf("v%d", *v)
}

// showsAlike tells whether b shows, as the writer and a new process load
// it: wholly or not at all, the same to both, and not at all when it was
// refused.
func (e *env) showsAlike(ctx context.Context, b *hoststore.CommitBatch, refused bool) bool {
	r := e.MustOpen(ctx)
	defer r.Kill()
	var first bool
	for i, p := range []*chapter.Proc{e.Writer(ctx), r} {
		shows, hides := e.Shows(ctx, p, b)
		if len(shows) > 0 && len(hides) > 0 {
			e.Fail(chapter.ObAllOrNothing, fmt.Sprintf("batch %q shows to %s in some of its scopes and not in others", b.CommitID(), p.Name()),
				"the batch wholly or not at all", fmt.Sprintf("shows in %v; not in %v", shows, hides))
		}
		v := len(shows) > 0
		if v && refused {
			e.Fail(chapter.ObVersionChain, fmt.Sprintf("batch %q was refused at commit, yet %s shows it", b.CommitID(), p.Name()), "a refused batch applies nothing", fmt.Sprintf("shows in %v", shows))
		}
		if i == 0 {
			first = v
		} else if v != first {
			e.Fail(chapter.ObVersionChain, fmt.Sprintf("two processes disagree whether batch %q shows", b.CommitID()), fmt.Sprintf("visible %v (as the first load)", first), fmt.Sprintf("visible %v", v))
		}
	}
	return first
}

// createOverDeleted is the same-version row's spec for a create of a name
// that was deleted. The writer never sends one, and the contract lets a
// store refuse it with Invalid, as the reference does, or accept it
// (docs/host-store-contract.md#batches, "Deleted names"). Refused, nothing
// of its batch shows. Accepted, the batch shows wholly or not at all; where
// it shows, the name is a new scope: the create's version, head and rows
// from index 0, as if the name had never been used.
func (e *env) createOverDeleted(ctx context.Context) {
	w := e.Writer(ctx)
	s := e.Scope(hoststore.KindSession, "deleted/s")
	f := e.Scope(hoststore.KindSession, "deleted/f")
	e.Commit(ctx, w, e.Batch(w, "deleted-setup", e.Up(s, chapter.WithHead([]byte("s1")), chapter.WithAppend([]byte("s0"), []byte("s1"), []byte("s2"))), e.Up(f, chapter.WithHead([]byte("f1")))), chapter.ObDurable)
	e.Commit(ctx, w, e.Batch(w, "deleted-del", e.Up(s, chapter.WithDelete())), chapter.ObRemoval)
	e.Note("r creates s again, whose name was deleted, and moves f on")
	create := chapter.UpFrom(s, nil, chapter.WithHead([]byte("s-by-r")), chapter.WithAppend([]byte("r0"), []byte("r1")))
	move := e.Up(f, chapter.WithHead([]byte("f-by-r")))
	r := e.Batch(w, "recreate", create, move)
	er := w.Commit(ctx, r)
	k := hoststore.KindOf(er)
	if er != nil && k != hoststore.ErrKindInvalid && k != hoststore.ErrKindIndeterminate {
		e.Fail(chapter.ObOperations, fmt.Sprintf("a create of %s, whose name was deleted, answered neither Invalid nor Ok", s), "Invalid (refused), or Ok (accepted)", chapter.ErrText(er))
	}
	if !e.showsAlike(ctx, r, k == hoststore.ErrKindInvalid) {
		e.CheckScopes(ctx, w, chapter.ObVersionChain, s, f)
		return
	}
	e.Note("the store accepted the create: s is a new scope, f moved on with it")
	model := e.Model
	fresh := reference.NewModel()
	if err := fresh.Apply(e.BatchWith(r.CommitID(), r.Token(), create)); err != nil {
		e.Failf(chapter.ObOperations, "harness bug: a fresh model refused the create: %v", err)
	}
	moved := e.Model.Clone()
	if err := moved.Apply(e.BatchWith(r.CommitID(), r.Token(), move)); err != nil {
		e.Failf(chapter.ObOperations, "harness bug: the model refused the move of %s: %v", f, err)
	}
	func() {
		defer func() { e.Model = model }()
		e.Model = fresh
		e.CheckScope(ctx, w, s, chapter.ObVersionChain)
	}()
	e.Model = moved
	e.CheckScope(ctx, w, f, chapter.ObVersionChain)
	e.Note("the writer deletes s again, so the realm is as the model has it")
	del := e.Batch(w, "redelete", chapter.UpFrom(s, hoststore.Ptr(hoststore.FirstVersion), chapter.WithDelete()))
	if err := w.Commit(ctx, del); err != nil {
		e.Fail(chapter.ObVersionChain, fmt.Sprintf("a delete of %s at the version its accepted create gave it failed", s), "Ok", chapter.ErrText(err))
	}
	e.CheckScopes(ctx, w, chapter.ObRemoval, s, f)
}
