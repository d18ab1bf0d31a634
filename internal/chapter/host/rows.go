package host

import (
	"context"
	"fmt"
	"strings"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/chapter"
	"github.com/conform-spi/conform/reports"
)

// rowRowsRemovalListing is row 8: "Rows keep stable indices through
// truncation and drops, removal takes effect with its batch, listings page
// every visible scope once in name order, and a batch at the size limits
// lands byte-exact."
func rowRowsRemovalListing() *chapter.Row {
	r := &chapter.Row{
		ID:          "rows",
		Name:        "Rows, removal and listing",
		Obligations: []reports.ObligationID{chapter.ObRemoval, chapter.ObOrder, chapter.ObListing, chapter.ObOperations, chapter.ObDurable},
	}
	r.Specs = func(re *chapter.Specs) {
		it(re, "keeps stable indices through truncation, drops past the end and appends after both", []reports.ObligationID{chapter.ObRemoval, chapter.ObOrder}, func(ctx context.Context, e *env) {
			w := e.Writer(ctx)
			q := e.MustOpen(ctx)
			s := e.Scope(hoststore.KindSession, "indices")
			rows := func(tag string, n int) chapter.UpOpt {
				var rs [][]byte
				for i := 0; i < n; i++ {
					rs = append(rs, []byte(fmt.Sprintf("%s-%d", tag, i)))
				}
				return chapter.WithAppend(rs...)
			}
			steps := []struct {
				what string
				opts []chapter.UpOpt
			}{
				{"create with five rows (0..4)", []chapter.UpOpt{chapter.WithHead([]byte("h0")), rows("a", 5)}},
				{"drop_before 2: rows 2..4 stay, not renumbered", []chapter.UpOpt{chapter.WithDrop(2)}},
				{"truncate_after 4: row 4 goes; the next row takes 4", []chapter.UpOpt{chapter.WithTruncate(4)}},
				{"append two rows: they take 4 and 5", []chapter.UpOpt{rows("b", 2)}},
				{"truncate_after at the end (6): nothing removed", []chapter.UpOpt{chapter.WithTruncate(6)}},
				{"truncate_after past the end (100): nothing removed, the end stays", []chapter.UpOpt{chapter.WithTruncate(100), rows("c", 1)}},
				{"drop_before past the end (100): every row goes, the end index stays 7", []chapter.UpOpt{chapter.WithDrop(100)}},
				{"append after a drop past the end: takes 7", []chapter.UpOpt{rows("d", 3)}},
				{"truncate, drop, append and head in one update apply in that order", []chapter.UpOpt{chapter.WithTruncate(9), chapter.WithDrop(8), rows("e", 2), chapter.WithHead([]byte("h1"))}},
				{"a head-only update keeps the rows", []chapter.UpOpt{chapter.WithHead([]byte{})}},
				{"an append-only update keeps the head", []chapter.UpOpt{rows("f", 1)}},
				{"drop every row but the last", []chapter.UpOpt{chapter.WithDrop(11)}},
			}
			for _, st := range steps {
				e.Note("%s", st.what)
				e.Commit(ctx, w, e.Batch(w, "step", e.Up(s, st.opts...)), chapter.ObRemoval)
				e.CheckScope(ctx, w, s, chapter.ObRemoval)
				e.CheckScope(ctx, q, s, chapter.ObRemoval)
			}
			e.checkReadPaging(ctx, q, s)
			q.Kill()
		})
		it(re, "makes truncation, drops and deletes take effect together with their batch", []reports.ObligationID{chapter.ObRemoval, chapter.ObListing, chapter.ObAllOrNothing}, func(ctx context.Context, e *env) {
			w := e.Writer(ctx)
			a := e.Scope(hoststore.KindRecord, "removal/a")
			b := e.Scope(hoststore.KindRecord, "removal/b")
			c := e.Scope(hoststore.KindRecord, "removal/c")
			e.Commit(ctx, w, e.Batch(w, "setup", e.Up(a, chapter.WithHead([]byte("a")), chapter.WithAppend([]byte("a0"), []byte("a1"))), e.Up(b, chapter.WithHead([]byte("b")), chapter.WithAppend([]byte("b0"), []byte("b1"), []byte("b2")))), chapter.ObDurable)
			e.Commit(ctx, w, e.Batch(w, "remove", e.Up(a, chapter.WithDelete()), e.Up(b, chapter.WithTruncate(1), chapter.WithDrop(1)), e.Up(c, chapter.WithHead([]byte("c")))), chapter.ObRemoval)
			q := e.MustOpen(ctx)
			for _, p := range []*chapter.Proc{w, q} {
				e.CheckScopes(ctx, p, chapter.ObRemoval, a, b, c)
				e.CheckOwnListing(ctx, p, hoststore.KindRecord, 3)
			}
			q.Kill()
		})
		it(re, "pages every visible scope of a kind once, in byte order of names, with limits 1, 2, 7 and large", []reports.ObligationID{chapter.ObListing, chapter.ObOperations}, func(ctx context.Context, e *env) {
			w := e.Writer(ctx)
			names := []string{"a", "ab", "abc", "a b", "a\u00e9", "B", "Z", "_", "~", "-", "é", "\u00ff", "日本", "日", "\U0001F600", "a/", "a0", "zz", "Zz", strings.Repeat("y", 40),
				"\uff21", "\ufffd", "\ue000", "a ", "a  ", "a\u00a0", "A"}
			var ups []hoststore.ScopeUpdate
			for i, n := range names {
				s := e.Scope(hoststore.KindIdentity, "list/"+n)
				ups = append(ups, e.Up(s, chapter.WithHead([]byte(fmt.Sprintf("h%d", i)))))
			}
			e.Commit(ctx, w, e.Batch(w, "names", ups...), chapter.ObListing)
			e.Note("the same names in another kind, some deleted there: kinds list apart")
			var twin []hoststore.ScopeUpdate
			for _, n := range names[:6] {
				twin = append(twin, e.Up(e.Scope(hoststore.KindMob, "list/"+n), chapter.WithHead([]byte("mob"))))
			}
			e.Commit(ctx, w, e.Batch(w, "twins", twin...), chapter.ObListing)
			e.Commit(ctx, w, e.Batch(w, "twins-del", e.Up(e.Scope(hoststore.KindMob, "list/ab"), chapter.WithDelete())), chapter.ObListing)
			q := e.MustOpen(ctx)
			e.Note("a new process loads every scope the listing must show")
			for _, n := range names {
				e.CheckScope(ctx, q, e.Scope(hoststore.KindIdentity, "list/"+n), chapter.ObDurable)
			}
			for _, n := range names[:6] {
				e.CheckScope(ctx, q, e.Scope(hoststore.KindMob, "list/"+n), chapter.ObDurable)
			}
			for _, limit := range []int{1, 2, 7, 1000} {
				for _, k := range hoststore.AllKinds {
					e.CheckOwnListing(ctx, q, k, limit)
				}
			}
			e.Note("a listing from a cursor that names no scope starts after it")
			after := hoststore.ScopeName(e.RowID() + "/list/a!")
			pg, err := q.List(ctx, hoststore.KindIdentity, &after, 3)
			if err != nil {
				e.Fail(chapter.ObOperations, "ListHeads after a name that is no scope failed", "a page", chapter.ErrText(err))
			}
			want, _ := e.Model.ListHeads(hoststore.KindIdentity, &after, 3)
			if len(pg.Heads) == 0 || len(want.Heads) == 0 || pg.Heads[0].Name != want.Heads[0].Name {
				e.Fail(chapter.ObListing, "ListHeads after a cursor that names no scope did not start at the next name by bytes", fmt.Sprintf("first %s", chapter.FirstName(want)), fmt.Sprintf("first %s", chapter.FirstName(pg)))
			}
			q.Kill()
		})
		it(re, "reads at most limit rows and fewer only at the scope's end: limits from 1 to past the rows left, from the first visible row and from the middle", []reports.ObligationID{chapter.ObOperations, chapter.ObRemoval, chapter.ObOrder}, func(ctx context.Context, e *env) {
			w := e.Writer(ctx)
			s := e.Scope(hoststore.KindRecord, "limits")
			var first, second [][]byte
			for i := 0; i < 12; i++ {
				first = append(first, e.Payload(fmt.Sprintf("a%d-", i), 8))
			}
			for i := 0; i < 6; i++ {
				second = append(second, e.Payload(fmt.Sprintf("b%d-", i), 8))
			}
			e.Commit(ctx, w, e.Batch(w, "limits-create", e.Up(s, chapter.WithHead([]byte("h")), chapter.WithAppend(first...))), chapter.ObDurable)
			e.CheckScope(ctx, w, s, chapter.ObDurable)
			e.Note("drop below 3 and append six more: the visible rows are [3, 18), from two batches")
			e.Commit(ctx, w, e.Batch(w, "limits-more", e.Up(s, chapter.WithDrop(3), chapter.WithAppend(second...))), chapter.ObRemoval)
			q := e.MustOpen(ctx)
			for _, p := range []*chapter.Proc{w, q} {
				e.Note("the whole scope first, so that wrong rows fail as what they are before any limit is judged")
				e.CheckScope(ctx, p, s, chapter.ObRemoval)
				e.checkReadLimits(ctx, p, s)
			}
			q.Kill()
		})
		it(re, "walks listings whose last page is exactly full, from the first name and from a cursor: every scope once, in byte order, and a next cursor only while the walk goes on", []reports.ObligationID{chapter.ObListing, chapter.ObOperations}, func(ctx context.Context, e *env) {
			w := e.Writer(ctx)
			const kind = hoststore.KindSession
			cursor := hoststore.ScopeName(string(e.RowID()) + "/full/")
			e.Note("enough scopes above the cursor %q that the names above it count a multiple of 12, so pages of 1, 2, 3, 4, 6 and 12 end exactly full", cursor)
			above := 0
			for _, n := range e.Model.Names(kind) {
				if n > cursor {
					above++
				}
			}
			k := 12 + (12-above%12)%12
			var ups []hoststore.ScopeUpdate
			var gone []hoststore.ScopeRef
			for i := 0; i < k+2; i++ {
				s := e.Scope(kind, fmt.Sprintf("full/%02d", i))
				ups = append(ups, e.Up(s, chapter.WithHead([]byte(fmt.Sprintf("f%d", i)))))
				if i == 0 || i == k/2 {
					gone = append(gone, s)
				}
			}
			e.Commit(ctx, w, e.Batch(w, "full", ups...), chapter.ObListing)
			e.Note("two of them deleted again, the first and one in the middle: tombstones in the walk")
			var dels []hoststore.ScopeUpdate
			for _, s := range gone {
				dels = append(dels, e.Up(s, chapter.WithDelete()))
			}
			e.Commit(ctx, w, e.Batch(w, "full-del", dels...), chapter.ObRemoval)
			above += k
			all := len(e.Model.Names(kind))
			q := e.MustOpen(ctx)
			limits := []int{1, 2, 3, 4, 5, 6, 7, 12, above - 1, above, above + 1}
			for _, limit := range limits {
				e.CheckOwnListingFrom(ctx, q, kind, &cursor, limit)
			}
			e.Note("from the first name: limits that divide the %d visible scopes of the kind end exactly full", all)
			for _, limit := range append(divisors(all, 4), all-1, all, all+1) {
				if limit > 0 {
					e.CheckOwnListing(ctx, q, kind, limit)
				}
			}
			q.Kill()
		})
		it(re, "answers a load, a read and a listing whose caller's context has ended with the context's error, or with what the realm holds", []reports.ObligationID{chapter.ObOperations, chapter.ObListing, chapter.ObErrors, chapter.ObDurable}, func(ctx context.Context, e *env) {
			w := e.Writer(ctx)
			s := e.Scope(hoststore.KindRecord, "ctx-ended")
			e.Commit(ctx, w, e.Batch(w, "ctx-ended", e.Up(s, chapter.WithHead([]byte("h")), chapter.WithAppend([]byte("r0"), []byte("r1")))), chapter.ObDurable)
			q := e.MustOpen(ctx)
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			e.CheckReadsUnder(ctx, cctx, q, s)
			e.Note("the same calls with the context live answer the truth")
			e.CheckScope(ctx, q, s, chapter.ObDurable)
			q.Kill()
		})
		it(re, "lands a batch at the size limits byte-exact", []reports.ObligationID{chapter.ObDurable, chapter.ObOperations}, func(ctx context.Context, e *env) {
			w := e.Writer(ctx)
			rng := e.Rand()
			raw := func(n int) []byte {
				b := make([]byte, n)
				for i := range b {
					b[i] = byte(rng.IntN(256))
				}
				return b
			}
			name := string(e.RowID()) + "/big/" + strings.Repeat("é", (hoststore.MaxScopeNameBytes-len(e.RowID())-5)/2)
			for len(name) < hoststore.MaxScopeNameBytes {
				name += "x"
			}
			big := hoststore.ScopeRef{Kind: hoststore.KindRecord, Name: hoststore.ScopeName(name)}
			var rows [][]byte
			for i := 0; i < 7; i++ {
				rows = append(rows, raw(hoststore.MaxRowBytes))
			}
			head := raw(hoststore.MaxBatchBytes - 7*hoststore.MaxRowBytes)
			id := hoststore.CommitID(strings.Repeat("c", hoststore.MaxCommitIDBytes-len("é")) + "é")
			b := e.BatchWith(id, w.Token, e.Up(big, chapter.WithHead(head), chapter.WithAppend(rows...)))
			if b.Bytes() != hoststore.MaxBatchBytes || len(name) != hoststore.MaxScopeNameBytes || len(id) != hoststore.MaxCommitIDBytes {
				e.Failf(chapter.ObOperations, "harness bug: the limit batch is not at the limits")
			}
			e.Commit(ctx, w, b, chapter.ObDurable)
			q := e.MustOpen(ctx)
			e.CheckScope(ctx, w, big, chapter.ObDurable)
			e.CheckScope(ctx, q, big, chapter.ObDurable)
			q.Kill()
			e.Note("the limit scope's rows, and a tiny empty row beside them")
			e.Commit(ctx, w, e.Batch(w, "empty-row", e.Up(big, chapter.WithDrop(7), chapter.WithAppend([]byte{}), chapter.WithHead([]byte{}))), chapter.ObRemoval)
			e.CheckScope(ctx, w, big, chapter.ObRemoval)
		})
	}
	return r
}

// checkReadPaging reads s with small limits and from every index, and
// checks each answer against the model: at most limit rows, in index
// order, ending early only at the scope's end; below the first visible row
// Invalid; past the end, nothing.
func (e *env) checkReadPaging(ctx context.Context, p *chapter.Proc, s hoststore.ScopeRef) {
	start, end, _ := e.Model.Bounds(s)
	for from := start; from <= end+1; from++ {
		for _, limit := range []int{1, 3} {
			want, _ := e.Model.ReadRows(s, from, limit)
			got, err := p.Read(ctx, s, from, limit)
			if err != nil {
				e.Fail(chapter.ObOperations, fmt.Sprintf("ReadRows(%s, from %d, limit %d) failed", s, from, limit), chapter.RowsText(want), chapter.ErrText(err))
			}
			if d := chapter.DiffRows(want, got); d != "" {
				e.FailDiff(chapter.ObOperations, fmt.Sprintf("ReadRows(%s, from %d, limit %d) differs from the visible rows", s, from, limit), chapter.RowsText(want), chapter.RowsText(got), d)
			}
		}
	}
	if start > 0 {
		if _, err := p.Read(ctx, s, 0, 5); hoststore.KindOf(err) != hoststore.ErrKindInvalid {
			e.Fail(chapter.ObOperations, fmt.Sprintf("ReadRows(%s, from 0), below the first visible row %d, was not Invalid", s, start), "Invalid", chapter.OkOr(err))
		}
	}
}

// divisors returns up to n divisors of m above 1 and below m, smallest
// first.
func divisors(m, n int) []int {
	var out []int
	for d := 2; d < m && len(out) < n; d++ {
		if m%d == 0 {
			out = append(out, d)
		}
	}
	return out
}

// checkReadLimits reads s from its first visible row, from the row after
// it, from the middle and from its last rows, each with limits 1 and 2,
// one less than the rows left, exactly the rows left, one more, and one far
// above: every answer holds exactly the model's rows, so never more than
// limit and fewer only at the end.
func (e *env) checkReadLimits(ctx context.Context, p *chapter.Proc, s hoststore.ScopeRef) {
	start, end, ok := e.Model.Bounds(s)
	if !ok || end-start < 4 {
		e.Failf(chapter.ObOperations, "harness bug: %s has too few rows for the limit reads", s)
	}
	for _, from := range []hoststore.RowIndex{start, start + 1, start + (end-start)/2, end - 2, end - 1} {
		left := int(end - from)
		for _, limit := range []int{1, 2, left - 1, left, left + 1, 1000} {
			if limit < 1 {
				continue
			}
			want, _ := e.Model.ReadRows(s, from, limit)
			got, err := p.Read(ctx, s, from, limit)
			if err != nil {
				e.Fail(chapter.ObOperations, fmt.Sprintf("ReadRows(%s, from %d, limit %d) failed", s, from, limit), chapter.RowsText(want), chapter.ErrText(err))
			}
			if len(got) > limit {
				e.Fail(chapter.ObOperations, fmt.Sprintf("ReadRows(%s, from %d, limit %d) answered %d rows, over its limit", s, from, limit, len(got)), fmt.Sprintf("%d rows", len(want)), fmt.Sprintf("%d rows: %s", len(got), chapter.RowsText(got)))
			}
			if len(got) < len(want) {
				e.Fail(chapter.ObOperations, fmt.Sprintf("ReadRows(%s, from %d, limit %d) answered %d rows though %d are left: fewer than the limit before the scope's end", s, from, limit, len(got), left), fmt.Sprintf("%d rows", len(want)), fmt.Sprintf("%d rows: %s", len(got), chapter.RowsText(got)))
			}
			if d := chapter.DiffRows(want, got); d != "" {
				e.FailDiff(chapter.ObOperations, fmt.Sprintf("ReadRows(%s, from %d, limit %d) differs from the visible rows", s, from, limit), chapter.RowsText(want), chapter.RowsText(got), d)
			}
		}
	}
}
