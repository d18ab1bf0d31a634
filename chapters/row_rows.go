package chapters

import (
	"context"
	"fmt"
	"strings"

	"github.com/conform-spi/conform/hoststore"
)

// rowRowsRemovalListing is row 8: "Rows keep stable indices through
// truncation and drops, removal takes effect with its batch, listings page
// every visible scope once in name order, and a batch at the size limits
// lands byte-exact."
func rowRowsRemovalListing() *Row {
	r := &Row{
		ID:          "rows",
		Name:        "Rows, removal and listing",
		Obligations: []string{ObRemoval, ObOrder, ObListing, ObOperations, ObDurable},
		DependsOn:   "nothing: it takes the fence itself; its listing checks cover every scope the rows before left, as the model has them",
	}
	r.register = func(re *rowEnv) {
		re.It("keeps stable indices through truncation, drops past the end and appends after both", []string{ObRemoval, ObOrder}, func(ctx context.Context, e *Env) {
			w := e.Writer(ctx)
			q := e.MustOpen(ctx)
			s := e.Scope(hoststore.KindSession, "indices")
			rows := func(tag string, n int) UpOpt {
				var rs [][]byte
				for i := 0; i < n; i++ {
					rs = append(rs, []byte(fmt.Sprintf("%s-%d", tag, i)))
				}
				return WithAppend(rs...)
			}
			steps := []struct {
				what string
				opts []UpOpt
			}{
				{"create with five rows (0..4)", []UpOpt{WithHead([]byte("h0")), rows("a", 5)}},
				{"drop_before 2: rows 2..4 stay, not renumbered", []UpOpt{WithDrop(2)}},
				{"truncate_after 4: row 4 goes; the next row takes 4", []UpOpt{WithTruncate(4)}},
				{"append two rows: they take 4 and 5", []UpOpt{rows("b", 2)}},
				{"truncate_after at the end (6): nothing removed", []UpOpt{WithTruncate(6)}},
				{"truncate_after past the end (100): nothing removed, the end stays", []UpOpt{WithTruncate(100), rows("c", 1)}},
				{"drop_before past the end (100): every row goes, the end index stays 7", []UpOpt{WithDrop(100)}},
				{"append after a drop past the end: takes 7", []UpOpt{rows("d", 3)}},
				{"truncate, drop, append and head in one update apply in that order", []UpOpt{WithTruncate(9), WithDrop(8), rows("e", 2), WithHead([]byte("h1"))}},
				{"a head-only update keeps the rows", []UpOpt{WithHead([]byte{})}},
				{"an append-only update keeps the head", []UpOpt{rows("f", 1)}},
				{"drop every row but the last", []UpOpt{WithDrop(11)}},
			}
			for _, st := range steps {
				e.Note("%s", st.what)
				e.Commit(ctx, w, e.Batch(w, "step", e.Up(s, st.opts...)), ObRemoval)
				e.CheckScope(ctx, w, s, ObRemoval)
				e.CheckScope(ctx, q, s, ObRemoval)
			}
			e.checkReadPaging(ctx, q, s)
			q.Kill()
		})
		re.It("makes truncation, drops and deletes take effect together with their batch", []string{ObRemoval, ObListing, ObAllOrNothing}, func(ctx context.Context, e *Env) {
			w := e.Writer(ctx)
			a := e.Scope(hoststore.KindRecord, "removal/a")
			b := e.Scope(hoststore.KindRecord, "removal/b")
			c := e.Scope(hoststore.KindRecord, "removal/c")
			e.Commit(ctx, w, e.Batch(w, "setup", e.Up(a, WithHead([]byte("a")), WithAppend([]byte("a0"), []byte("a1"))), e.Up(b, WithHead([]byte("b")), WithAppend([]byte("b0"), []byte("b1"), []byte("b2")))), ObDurable)
			e.Commit(ctx, w, e.Batch(w, "remove", e.Up(a, WithDelete()), e.Up(b, WithTruncate(1), WithDrop(1)), e.Up(c, WithHead([]byte("c")))), ObRemoval)
			q := e.MustOpen(ctx)
			for _, p := range []*Proc{w, q} {
				e.CheckScopes(ctx, p, ObRemoval, a, b, c)
				e.CheckOwnListing(ctx, p, hoststore.KindRecord, 3)
			}
			q.Kill()
		})
		re.It("pages every visible scope of a kind once, in byte order of names, with limits 1, 2, 7 and large", []string{ObListing, ObOperations}, func(ctx context.Context, e *Env) {
			w := e.Writer(ctx)
			names := []string{"a", "ab", "abc", "a b", "a\u00e9", "B", "Z", "_", "~", "-", "é", "\u00ff", "日本", "日", "\U0001F600", "a/", "a0", "zz", "Zz", strings.Repeat("y", 40),
				"\uff21", "\ufffd", "\ue000", "a ", "a  ", "a\u00a0", "A"}
			var ups []hoststore.ScopeUpdate
			for i, n := range names {
				s := e.Scope(hoststore.KindIdentity, "list/"+n)
				ups = append(ups, e.Up(s, WithHead([]byte(fmt.Sprintf("h%d", i)))))
			}
			e.Commit(ctx, w, e.Batch(w, "names", ups...), ObListing)
			e.Note("the same names in another kind, some deleted there: kinds list apart")
			var twin []hoststore.ScopeUpdate
			for _, n := range names[:6] {
				twin = append(twin, e.Up(e.Scope(hoststore.KindMob, "list/"+n), WithHead([]byte("mob"))))
			}
			e.Commit(ctx, w, e.Batch(w, "twins", twin...), ObListing)
			e.Commit(ctx, w, e.Batch(w, "twins-del", e.Up(e.Scope(hoststore.KindMob, "list/ab"), WithDelete())), ObListing)
			q := e.MustOpen(ctx)
			e.Note("a new process loads every scope the listing must show")
			for _, n := range names {
				e.CheckScope(ctx, q, e.Scope(hoststore.KindIdentity, "list/"+n), ObDurable)
			}
			for _, n := range names[:6] {
				e.CheckScope(ctx, q, e.Scope(hoststore.KindMob, "list/"+n), ObDurable)
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
				e.Fail(ObOperations, "ListHeads after a name that is no scope failed", "a page", errText(err))
			}
			want, _ := e.Model.ListHeads(hoststore.KindIdentity, &after, 3)
			if len(pg.Heads) == 0 || len(want.Heads) == 0 || pg.Heads[0].Name != want.Heads[0].Name {
				e.Fail(ObListing, "ListHeads after a cursor that names no scope did not start at the next name by bytes", fmt.Sprintf("first %s", firstName(want)), fmt.Sprintf("first %s", firstName(pg)))
			}
			q.Kill()
		})
		re.It("lands a batch at the size limits byte-exact", []string{ObDurable, ObOperations}, func(ctx context.Context, e *Env) {
			w := e.Writer(ctx)
			rng := e.Rand()
			raw := func(n int) []byte {
				b := make([]byte, n)
				for i := range b {
					b[i] = byte(rng.IntN(256))
				}
				return b
			}
			name := e.RowID() + "/big/" + strings.Repeat("é", (hoststore.MaxScopeNameBytes-len(e.RowID())-5)/2)
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
			b := e.BatchWith(id, w.Token, e.Up(big, WithHead(head), WithAppend(rows...)))
			if b.Bytes() != hoststore.MaxBatchBytes || len(name) != hoststore.MaxScopeNameBytes || len(id) != hoststore.MaxCommitIDBytes {
				e.Failf(ObOperations, "harness bug: the limit batch is not at the limits")
			}
			e.Commit(ctx, w, b, ObDurable)
			q := e.MustOpen(ctx)
			e.CheckScope(ctx, w, big, ObDurable)
			e.CheckScope(ctx, q, big, ObDurable)
			q.Kill()
			e.Note("the limit scope's rows, and a tiny empty row beside them")
			e.Commit(ctx, w, e.Batch(w, "empty-row", e.Up(big, WithDrop(7), WithAppend([]byte{}), WithHead([]byte{}))), ObRemoval)
			e.CheckScope(ctx, w, big, ObRemoval)
		})
	}
	return r
}

func firstName(p hoststore.HeadPage) string {
	if len(p.Heads) == 0 {
		return "none"
	}
	return fmt.Sprintf("%q", p.Heads[0].Name)
}

// checkReadPaging reads s with small limits and from every index, and
// checks each answer against the model: at most limit rows, in index
// order, ending early only at the scope's end; below the first visible row
// Invalid; past the end, nothing.
func (e *Env) checkReadPaging(ctx context.Context, p *Proc, s hoststore.ScopeRef) {
	start, end, _ := e.Model.Bounds(s)
	for from := start; from <= end+1; from++ {
		for _, limit := range []int{1, 3} {
			want, _ := e.Model.ReadRows(s, from, limit)
			got, err := p.Read(ctx, s, from, limit)
			if err != nil {
				e.Fail(ObOperations, fmt.Sprintf("ReadRows(%s, from %d, limit %d) failed", s, from, limit), rowsText(want), errText(err))
			}
			if d := diffRows(want, got); d != "" {
				e.FailDiff(ObOperations, fmt.Sprintf("ReadRows(%s, from %d, limit %d) differs from the visible rows", s, from, limit), rowsText(want), rowsText(got), d)
			}
		}
	}
	if start > 0 {
		if _, err := p.Read(ctx, s, 0, 5); hoststore.KindOf(err) != hoststore.ErrKindInvalid {
			e.Fail(ObOperations, fmt.Sprintf("ReadRows(%s, from 0), below the first visible row %d, was not Invalid", s, start), "Invalid", okOr(err))
		}
	}
}
