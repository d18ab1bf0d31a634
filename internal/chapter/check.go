package chapter

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/conform-spi/conform/internal/spec"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/textsafe"
	"github.com/conform-spi/conform/reports"
)

// ReadPage is the limit the checks read rows with.
const ReadPage = 64

// CheckScope compares what p shows of s (head, version, commit id, and every
// visible row with its index) with the model, byte for byte. ob names the
// obligation a difference breaks.
func (e *Env) CheckScope(ctx context.Context, p *Proc, s hoststore.ScopeRef, ob reports.ObligationID) {
	spec.Helper()
	want := e.Model.Head(s)
	got, err := p.Load(ctx, s)
	if err != nil {
		e.Fail(ObOperations, fmt.Sprintf("LoadHead(%s) failed", s), headText(want), ErrText(err))
	}
	if !sameHead(want, got) {
		e.FailDiff(ob, fmt.Sprintf("%s loads a head the reference does not have", s), headText(want), headText(got), "")
	}
	start, end, ok := e.Model.Bounds(s)
	if !ok {
		rows, err := p.Read(ctx, s, 0, ReadPage)
		if err != nil {
			e.Fail(ObOperations, fmt.Sprintf("ReadRows of %s, which does not exist, failed", s), "no rows", ErrText(err))
		}
		if len(rows) > 0 {
			e.FailDiff(ob, fmt.Sprintf("%s does not exist, yet ReadRows answers rows", s), "no rows", RowsText(rows), "")
		}
		return
	}
	wantRows, _ := e.Model.ReadRows(s, start, int(end-start)+1)
	gotRows := e.readAll(ctx, p, s, start, end, ob)
	if d := DiffRows(wantRows, gotRows); d != "" {
		if sameRowsOtherOrder(wantRows, gotRows) {
			e.FailDiff(ObOrder, fmt.Sprintf("%s loads the right rows out of commit order", s), RowsText(wantRows), RowsText(gotRows), d)
		}
		e.FailDiff(ob, fmt.Sprintf("%s loads rows the reference does not have", s), RowsText(wantRows), RowsText(gotRows), d)
	}
	if start > 0 && start < end {
		_, err := p.Read(ctx, s, start-1, ReadPage)
		if hoststore.KindOf(err) != hoststore.ErrKindInvalid {
			e.Fail(ObOperations, fmt.Sprintf("ReadRows of %s from %d, below the first visible row %d, was not refused as Invalid", s, start-1, start), "Invalid", OkOr(err))
		}
	}
}

// CheckReadsUnder loads s, reads its rows and lists its kind from p, each
// under callCtx, a context that has ended while the spec's ctx goes on.
// Each call may answer the context's error (or Unavailable); an answer
// without an error must be the truth: the model's head, its rows, and a
// listing that names s with that head.
func (e *Env) CheckReadsUnder(ctx, callCtx context.Context, p *Proc, s hoststore.ScopeRef) {
	spec.Helper()
	answered := func(op string, err error) bool {
		switch k := hoststore.KindOf(err); {
		case err == nil:
			return true
		case k == hoststore.ErrKindContext || k == hoststore.ErrKindUnavailable:
			return false
		}
		e.Fail(ObErrors, fmt.Sprintf("%s of %s, with its caller's context ended, answered outside the error contract", op, s), "the context's error, or the answer", ErrText(err))
		return false
	}
	want := e.Model.Head(s)
	h, err := p.loadUnder(ctx, callCtx, s)
	if answered("LoadHead", err) && !sameHead(want, h) {
		e.FailDiff(ObOperations, fmt.Sprintf("LoadHead of %s, with its caller's context ended, answered Ok with a head the realm does not hold", s), headText(want), headText(h), "")
	}
	start, end, _ := e.Model.Bounds(s)
	wantRows, _ := e.Model.ReadRows(s, start, int(end-start)+1)
	rows, err := p.readUnder(ctx, callCtx, s, start, int(end-start)+1)
	if answered("ReadRows", err) {
		if d := DiffRows(wantRows, rows); d != "" {
			e.FailDiff(ObOperations, fmt.Sprintf("ReadRows of %s, with its caller's context ended, answered Ok with rows the realm does not hold", s), RowsText(wantRows), RowsText(rows), d)
		}
	}
	after := hoststore.ScopeName(strings.TrimSuffix(string(s.Name), string(s.Name[len(s.Name)-1:])))
	pg, err := p.listUnder(ctx, callCtx, s.Kind, &after, 1)
	if answered("ListHeads", err) && (len(pg.Heads) != 1 || pg.Heads[0].Name != s.Name || !sameHead(want, &pg.Heads[0].Head)) {
		e.Fail(ObListing, fmt.Sprintf("ListHeads(%s, after %q, limit 1), with its caller's context ended, answered Ok without %s, the next name", s.Kind, after, s.Name),
			fmt.Sprintf("%q with %s", s.Name, headText(want)), fmt.Sprintf("%d heads, first %s", len(pg.Heads), FirstName(pg)))
	}
}

// FirstName returns the first name a page lists, quoted, or "none".
func FirstName(pg hoststore.HeadPage) string {
	if len(pg.Heads) == 0 {
		return "none"
	}
	return fmt.Sprintf("%q", pg.Heads[0].Name)
}

// readAll reads [start, end) in pages and checks the paging rules of
// read_rows: rows in index order from `from`, at most limit, ending early
// only at the scope's end.
func (e *Env) readAll(ctx context.Context, p *Proc, s hoststore.ScopeRef, start, end hoststore.RowIndex, ob reports.ObligationID) []hoststore.Row {
	spec.Helper()
	var out []hoststore.Row
	from := start
	for i := 0; ; i++ {
		rows, err := p.Read(ctx, s, from, ReadPage)
		if err != nil {
			e.Fail(ObOperations, fmt.Sprintf("ReadRows(%s, from %d) failed", s, from), "rows", ErrText(err))
		}
		if len(rows) > ReadPage {
			e.Fail(ObOperations, fmt.Sprintf("ReadRows(%s, from %d, limit %d) answered %d rows, over its limit", s, from, ReadPage, len(rows)), fmt.Sprintf("at most %d", ReadPage), fmt.Sprint(len(rows)))
		}
		for j, r := range rows {
			if r.Index != from+hoststore.RowIndex(j) {
				e.FailDiff(ob, fmt.Sprintf("ReadRows(%s, from %d) is not in index order from %d", s, from, from), fmt.Sprintf("row %d at position %d", from+hoststore.RowIndex(j), j), fmt.Sprintf("row %d", r.Index), RowsText(rows))
			}
		}
		out = append(out, rows...)
		from += hoststore.RowIndex(len(rows))
		if len(rows) < ReadPage {
			return out
		}
		if from >= end+1 || i > 1<<16 {
			return out
		}
	}
}

// sameRowsOtherOrder tells whether got holds exactly want's indices and
// want's payloads, but pairs them in another order.
func sameRowsOtherOrder(want, got []hoststore.Row) bool {
	if len(want) != len(got) || len(want) < 2 {
		return false
	}
	payloads := map[string]int{}
	for i := range want {
		if want[i].Index != got[i].Index {
			return false
		}
		payloads[string(want[i].Data)]++
		payloads[string(got[i].Data)]--
	}
	for _, n := range payloads {
		if n != 0 {
			return false
		}
	}
	return true
}

func sameHead(a, b *hoststore.VersionedHead) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Version == b.Version && a.CommitID == b.CommitID && bytes.Equal(a.Head, b.Head)
}

// DiffRows returns the first differences between two row lists, one line
// each, or "" when they are equal.
func DiffRows(want, got []hoststore.Row) string {
	var sb strings.Builder
	n := max(len(want), len(got))
	shown := 0
	for i := 0; i < n && shown < 8; i++ {
		switch {
		case i >= len(got):
			fmt.Fprintf(&sb, "- row %d %s (missing)\n", want[i].Index, textsafe.Payload(want[i].Data))
			shown++
		case i >= len(want):
			fmt.Fprintf(&sb, "+ row %d %s (extra)\n", got[i].Index, textsafe.Payload(got[i].Data))
			shown++
		case want[i].Index != got[i].Index || !bytes.Equal(want[i].Data, got[i].Data):
			fmt.Fprintf(&sb, "- row %d %s\n+ row %d %s\n", want[i].Index, textsafe.Payload(want[i].Data), got[i].Index, textsafe.Payload(got[i].Data))
			shown++
		}
	}
	if sb.Len() == 0 {
		return ""
	}
	return fmt.Sprintf("want %d rows, got %d:\n%s", len(want), len(got), sb.String())
}

// RowsText returns rows as a trail shows them: index and payload, the
// first six.
func RowsText(rows []hoststore.Row) string {
	if len(rows) == 0 {
		return "no rows"
	}
	var sb strings.Builder
	for i, r := range rows {
		if i == 6 {
			fmt.Fprintf(&sb, " … (%d rows in all)", len(rows))
			break
		}
		if i > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "%d:%s", r.Index, textsafe.Payload(r.Data))
	}
	return sb.String()
}

// CheckScopes checks each scope with CheckScope.
func (e *Env) CheckScopes(ctx context.Context, p *Proc, ob reports.ObligationID, scopes ...hoststore.ScopeRef) {
	spec.Helper()
	for _, s := range scopes {
		e.CheckScope(ctx, p, s, ob)
	}
}

// listAll pages through kind's listing with limit, from the cursor after
// (nil: from the first name), and checks the paging rules: each page at
// most limit, names strictly increasing by bytes and above the cursor, a
// Next that neither goes back into its page nor follows an empty one, and
// a listing that ends. It returns every head listed.
//
// A Next after a last page that is exactly full is allowed: the page it
// leads to is then empty, and an empty page ends the listing
// (docs/host-store-contract.md#edges, "ListHeads Next when nothing
// follows").
func (e *Env) listAll(ctx context.Context, p *Proc, kind hoststore.ScopeKind, after *hoststore.ScopeName, limit int) []hoststore.NamedHead {
	spec.Helper()
	var out []hoststore.NamedHead
	bound := len(e.Model.Names(kind)) + 16
	for pages := 0; ; pages++ {
		pg, err := p.List(ctx, kind, after, limit)
		if err != nil {
			e.Fail(ObOperations, fmt.Sprintf("ListHeads(%s, limit %d) failed", kind, limit), "a page", ErrText(err))
		}
		if len(pg.Heads) > limit {
			e.Fail(ObListing, fmt.Sprintf("ListHeads(%s, limit %d) answered %d heads, over its limit", kind, limit, len(pg.Heads)), fmt.Sprintf("at most %d", limit), fmt.Sprint(len(pg.Heads)))
		}
		for _, h := range pg.Heads {
			if after != nil && h.Name <= *after {
				e.Fail(ObListing, fmt.Sprintf("ListHeads(%s) answered %q, which does not sort after %q by bytes", kind, h.Name, *after), "names after the cursor, in byte order", fmt.Sprintf("%q", h.Name))
			}
			if n := len(out); n > 0 && h.Name <= out[n-1].Name {
				e.Fail(ObListing, fmt.Sprintf("ListHeads(%s) is not in byte order of names, or lists a name twice", kind), fmt.Sprintf("a name after %q", out[n-1].Name), fmt.Sprintf("%q", h.Name))
			}
			out = append(out, h)
		}
		if pg.Next == nil {
			return out
		}
		if len(pg.Heads) == 0 {
			e.Fail(ObListing, fmt.Sprintf("ListHeads(%s, after %s, limit %d) answered an empty page with a next cursor %q: an empty page ends the listing", kind, NameText(after), limit, *pg.Next), "next nil on an empty page", fmt.Sprintf("%q", *pg.Next))
		}
		if last := pg.Heads[len(pg.Heads)-1].Name; *pg.Next < last {
			e.Fail(ObListing, fmt.Sprintf("ListHeads(%s, limit %d) answered a next cursor %q below the page's last name %q: the next page lists names of this one again", kind, limit, *pg.Next, last), fmt.Sprintf("a cursor at or after %q", last), fmt.Sprintf("%q", *pg.Next))
		}
		if after != nil && *pg.Next <= *after {
			e.Fail(ObListing, fmt.Sprintf("ListHeads(%s) answered a next cursor %q that does not move past %q: the listing never ends", kind, *pg.Next, *after), "a cursor that moves on", fmt.Sprintf("%q", *pg.Next))
		}
		if pages > bound {
			e.Fail(ObListing, fmt.Sprintf("ListHeads(%s, limit %d) did not end after %d pages for %d visible scopes", kind, limit, pages, bound-16), "next nil once the listing has ended", "more pages")
		}
		after = pg.Next
	}
}

// CheckOwnListing pages kind's whole listing with limit (checking its
// paging rules throughout) and compares the scopes of the running row (its
// name prefix) with the model. Rows other than the listing row use it, so
// that what an earlier failed row left behind fails that row, not this one.
func (e *Env) CheckOwnListing(ctx context.Context, p *Proc, kind hoststore.ScopeKind, limit int) {
	spec.Helper()
	e.checkListing(ctx, p, kind, nil, limit, string(e.rowID)+"/")
}

// CheckOwnListingFrom is CheckOwnListing for the walk that starts after
// the cursor after: the paging rules hold on every page to the end of the
// kind, and the running row's scopes above the cursor are exactly the
// model's, once each, in byte order, with their heads.
func (e *Env) CheckOwnListingFrom(ctx context.Context, p *Proc, kind hoststore.ScopeKind, after *hoststore.ScopeName, limit int) {
	spec.Helper()
	e.checkListing(ctx, p, kind, after, limit, string(e.rowID)+"/")
}

func (e *Env) checkListing(ctx context.Context, p *Proc, kind hoststore.ScopeKind, after *hoststore.ScopeName, limit int, prefix string) {
	spec.Helper()
	all := e.listAll(ctx, p, kind, after, limit)
	var got []hoststore.NamedHead
	for _, h := range all {
		if strings.HasPrefix(string(h.Name), prefix) {
			got = append(got, h)
		}
	}
	var want []hoststore.NamedHead
	for _, n := range e.Model.Names(kind) {
		if !strings.HasPrefix(string(n), prefix) || after != nil && n <= *after {
			continue
		}
		h := e.Model.Head(hoststore.ScopeRef{Kind: kind, Name: n})
		want = append(want, hoststore.NamedHead{Name: n, Head: *h})
	}
	if d := diffListing(want, got); d != "" {
		what := "the visible scopes"
		if prefix != "" {
			what = fmt.Sprintf("the visible scopes named %q…", prefix)
		}
		if after != nil {
			what += fmt.Sprintf(" after %q", *after)
		}
		e.FailDiff(ObListing, fmt.Sprintf("the listing of %s (pages of %d) differs from %s", kind, limit, what),
			fmt.Sprintf("%d scopes", len(want)), fmt.Sprintf("%d scopes", len(got)), d)
	}
}

func diffListing(want, got []hoststore.NamedHead) string {
	var sb strings.Builder
	i, j, shown := 0, 0, 0
	for (i < len(want) || j < len(got)) && shown < 10 {
		switch {
		case j >= len(got) || (i < len(want) && want[i].Name < got[j].Name):
			fmt.Fprintf(&sb, "- %q (visible, not listed)\n", want[i].Name)
			i++
			shown++
		case i >= len(want) || got[j].Name < want[i].Name:
			fmt.Fprintf(&sb, "+ %q (listed, not visible)\n", got[j].Name)
			j++
			shown++
		default:
			w, g := want[i].Head, got[j].Head
			if !sameHead(&w, &g) {
				fmt.Fprintf(&sb, "~ %q: want %s, got %s\n", want[i].Name, headText(&w), headText(&g))
				shown++
			}
			i++
			j++
		}
	}
	return sb.String()
}

// Shows tells, scope by scope, whether p sees batch b: the scope's head
// carries b's commit id (for a delete: the scope is gone). It returns the
// scopes that show it and those that do not.
func (e *Env) Shows(ctx context.Context, p *Proc, b *hoststore.CommitBatch) (shows, hides []hoststore.ScopeRef) {
	spec.Helper()
	for _, u := range b.Updates() {
		h, err := p.Load(ctx, u.Scope)
		if err != nil {
			e.Fail(ObOperations, fmt.Sprintf("LoadHead(%s) failed", u.Scope), "a head or none", ErrText(err))
		}
		landed := h != nil && h.CommitID == b.CommitID()
		if u.Delete {
			landed = h == nil
		}
		if landed {
			shows = append(shows, u.Scope)
		} else {
			hides = append(hides, u.Scope)
		}
	}
	return shows, hides
}

// CheckBefore checks, scope by scope, that p shows either the version the
// model holds (what the batches before b left, all acknowledged) or b
// itself: anything else means an acknowledged batch was lost, or something
// nobody committed shows.
func (e *Env) CheckBefore(ctx context.Context, p *Proc, b *hoststore.CommitBatch) {
	spec.Helper()
	for _, u := range b.Updates() {
		got, err := p.Load(ctx, u.Scope)
		if err != nil {
			e.Fail(ObOperations, fmt.Sprintf("LoadHead(%s) failed", u.Scope), "a head or none", ErrText(err))
		}
		want := e.Model.Head(u.Scope)
		if sameHead(want, got) || (got != nil && got.CommitID == b.CommitID()) || (u.Delete && got == nil) {
			continue
		}
		e.Fail(ObDurable, fmt.Sprintf("%s shows neither the version its acknowledged batches left nor batch %q", u.Scope, b.CommitID()),
			headText(want)+fmt.Sprintf(", or batch %q", b.CommitID()), headText(got))
	}
}

// Settle tells whether batch b, whose outcome is unknown, landed, the way
// the writer does it after a kill: the next process loads the heads of the
// batch's scopes and compares commit ids. A batch that shows in some of its
// scopes and not in others breaks all-or-nothing and fails the spec. A
// batch that landed is applied to the model.
func (e *Env) Settle(ctx context.Context, p *Proc, b *hoststore.CommitBatch) bool {
	spec.Helper()
	e.CheckBefore(ctx, p, b)
	shows, hides := e.Shows(ctx, p, b)
	if len(shows) > 0 && len(hides) > 0 {
		e.Fail(ObAllOrNothing, fmt.Sprintf("batch %q shows in some of its scopes and not in others", b.CommitID()),
			"the batch in every scope it touches, or in none", fmt.Sprintf("shows in %v; not in %v", shows, hides))
	}
	landed := len(shows) > 0
	e.Note("settled %q: landed=%v", b.CommitID(), landed)
	if landed {
		e.Landed(b)
	}
	return landed
}
