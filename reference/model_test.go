package reference

import (
	"reflect"
	"testing"

	"github.com/conform-spi/conform/hoststore"
)

// TestModelRowParts covers the order TruncateAfter, DropBefore, Append,
// Head, and the edge cases of docs/host-store-contract.md#batches, over a scope created with the
// rows 0..4 ("r0".."r4").
func TestModelRowParts(t *testing.T) {
	ri := func(i uint64) *hoststore.RowIndex { return hoststore.Ptr(hoststore.RowIndex(i)) }
	type change = func(*hoststore.ScopeUpdate)
	cases := []struct {
		name       string
		steps      []change
		start, end hoststore.RowIndex
		rows       []string // visible rows as "index:data"
	}{
		{"truncate at the end removes nothing", []change{func(u *hoststore.ScopeUpdate) { u.TruncateAfter = ri(5) }},
			0, 5, []string{"0:r0", "1:r1", "2:r2", "3:r3", "4:r4"}},
		{"truncate past the end removes nothing", []change{func(u *hoststore.ScopeUpdate) { u.TruncateAfter = ri(9) }},
			0, 5, []string{"0:r0", "1:r1", "2:r2", "3:r3", "4:r4"}},
		{"truncate removes rows at or past it", []change{func(u *hoststore.ScopeUpdate) { u.TruncateAfter = ri(3) }},
			0, 3, []string{"0:r0", "1:r1", "2:r2"}},
		{"truncate to zero", []change{func(u *hoststore.ScopeUpdate) { u.TruncateAfter = ri(0) }},
			0, 0, nil},
		{"truncate then append takes the truncated index", []change{func(u *hoststore.ScopeUpdate) { u.TruncateAfter = ri(3); u.Append = rowsOf("a", "b", "c") }},
			0, 6, []string{"0:r0", "1:r1", "2:r2", "3:a", "4:b", "5:c"}},
		{"drop keeps indices", []change{func(u *hoststore.ScopeUpdate) { u.DropBefore = ri(2) }},
			2, 5, []string{"2:r2", "3:r3", "4:r4"}},
		{"drop at the end removes every row", []change{func(u *hoststore.ScopeUpdate) { u.DropBefore = ri(5) }},
			5, 5, nil},
		{"drop past the end keeps the end index", []change{func(u *hoststore.ScopeUpdate) { u.DropBefore = ri(9) }},
			5, 5, nil},
		{"append after a drop past the end takes the old end", []change{
			func(u *hoststore.ScopeUpdate) { u.DropBefore = ri(9) },
			func(u *hoststore.ScopeUpdate) { u.Append = rowsOf("x") }},
			5, 6, []string{"5:x"}},
		{"drop past the end then append in one update", []change{func(u *hoststore.ScopeUpdate) { u.DropBefore = ri(9); u.Append = rowsOf("x") }},
			5, 6, []string{"5:x"}},
		{"drop at or below the start removes nothing", []change{
			func(u *hoststore.ScopeUpdate) { u.DropBefore = ri(3) },
			func(u *hoststore.ScopeUpdate) { u.DropBefore = ri(1) }},
			3, 5, []string{"3:r3", "4:r4"}},
		{"truncate applies before drop", []change{func(u *hoststore.ScopeUpdate) { u.TruncateAfter = ri(4); u.DropBefore = ri(2) }},
			2, 4, []string{"2:r2", "3:r3"}},
		{"drop past a truncated end keeps the truncated end", []change{func(u *hoststore.ScopeUpdate) { u.TruncateAfter = ri(3); u.DropBefore = ri(4) }},
			3, 3, nil},
		{"append after both", []change{func(u *hoststore.ScopeUpdate) {
			u.TruncateAfter = ri(4)
			u.DropBefore = ri(2)
			u.Append = rowsOf("x", "y")
		}},
			2, 6, []string{"2:r2", "3:r3", "4:x", "5:y"}},
		{"truncate below the start removes every row and moves both ends", []change{
			func(u *hoststore.ScopeUpdate) { u.DropBefore = ri(4) },
			func(u *hoststore.ScopeUpdate) { u.TruncateAfter = ri(2) }},
			2, 2, nil},
		{"append after truncating below the start", []change{
			func(u *hoststore.ScopeUpdate) { u.DropBefore = ri(4) },
			func(u *hoststore.ScopeUpdate) { u.TruncateAfter = ri(2); u.Append = rowsOf("z") }},
			2, 3, []string{"2:z"}},
		{"truncate at the start", []change{
			func(u *hoststore.ScopeUpdate) { u.DropBefore = ri(2) },
			func(u *hoststore.ScopeUpdate) { u.TruncateAfter = ri(2) }},
			2, 2, nil},
		{"head only keeps the rows", []change{func(u *hoststore.ScopeUpdate) { u.Head = hoststore.Ptr([]byte("h2")) }},
			0, 5, []string{"0:r0", "1:r1", "2:r2", "3:r3", "4:r4"}},
		{"an update that changes nothing keeps the rows", []change{nil},
			0, 5, []string{"0:r0", "1:r1", "2:r2", "3:r3", "4:r4"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := sess("s")
			m := NewModel()
			mustApply(t, m, batch(t, "c0", 1, create(s, "h", "r0", "r1", "r2", "r3", "r4")))
			v := hoststore.FirstVersion
			for i, ch := range tc.steps {
				mustApply(t, m, batch(t, "c"+string(rune('1'+i)), 1, step(s, v, ch)))
				v++
			}
			start, end, ok := m.Bounds(s)
			if !ok || start != tc.start || end != tc.end {
				t.Fatalf("Bounds = [%d,%d) %v, want [%d,%d) true", start, end, ok, tc.start, tc.end)
			}
			rows, err := m.ReadRows(s, tc.start, 100)
			if err != nil {
				t.Fatalf("ReadRows: %v", err)
			}
			if got := rowStrings(rows); !reflect.DeepEqual(got, tc.rows) && !(len(got) == 0 && len(tc.rows) == 0) {
				t.Fatalf("rows = %v, want %v", got, tc.rows)
			}
			h := m.Head(s)
			lastID := "c" + string(rune('0'+len(tc.steps)))
			if h == nil || h.Version != v || string(h.CommitID) != lastID {
				t.Fatalf("head = %s, want version %d by %q", fmtHead(h), v, lastID)
			}
		})
	}
}

// TestModelVersionAndCommitID: every update, also one that only appends or
// only changes the head, moves the version to Next and records the commit
// id; a head left nil keeps the head.
func TestModelVersionAndCommitID(t *testing.T) {
	s := sess("s")
	m := NewModel()
	mustApply(t, m, batch(t, "a", 1, create(s, "h1")))
	wantHead(t, "after create", m.Head(s), 1, "a", "h1")
	mustApply(t, m, batch(t, "b", 1, step(s, 1, func(u *hoststore.ScopeUpdate) { u.Append = rowsOf("x") })))
	wantHead(t, "after an append", m.Head(s), 2, "b", "h1")
	mustApply(t, m, batch(t, "c", 1, step(s, 2, func(u *hoststore.ScopeUpdate) { u.Head = hoststore.Ptr([]byte{}) })))
	wantHead(t, "after an empty head", m.Head(s), 3, "c", "")
	if h := m.Head(s); h.Head == nil {
		t.Fatalf("an empty head answered nil bytes, want empty non-nil")
	}
}

// TestModelReadRows covers ReadRows: absent scope, below the start, past
// the end, limits, and copies.
func TestModelReadRows(t *testing.T) {
	s := sess("s")
	m := NewModel()
	mustApply(t, m, batch(t, "a", 1, create(s, "h", "r0", "r1", "r2", "r3")))
	mustApply(t, m, batch(t, "b", 1, step(s, 1, func(u *hoststore.ScopeUpdate) { u.DropBefore = hoststore.Ptr(hoststore.RowIndex(1)) })))
	cases := []struct {
		name  string
		scope hoststore.ScopeRef
		from  hoststore.RowIndex
		limit int
		want  []string
		kind  hoststore.ErrorKind
	}{
		{"absent scope has no rows", sess("nope"), 0, 10, nil, hoststore.ErrKindNone},
		{"absent scope, any from", sess("nope"), 99, 10, nil, hoststore.ErrKindNone},
		{"below the start", s, 0, 10, nil, hoststore.ErrKindInvalid},
		{"from the start", s, 1, 10, []string{"1:r1", "2:r2", "3:r3"}, hoststore.ErrKindNone},
		{"limit cuts", s, 1, 2, []string{"1:r1", "2:r2"}, hoststore.ErrKindNone},
		{"limit one mid", s, 2, 1, []string{"2:r2"}, hoststore.ErrKindNone},
		{"ends early at the end", s, 3, 10, []string{"3:r3"}, hoststore.ErrKindNone},
		{"at the end", s, 4, 10, nil, hoststore.ErrKindNone},
		{"past the end", s, 40, 10, nil, hoststore.ErrKindNone},
		{"huge limit", s, 1, int(^uint(0) >> 1), []string{"1:r1", "2:r2", "3:r3"}, hoststore.ErrKindNone},
		{"zero limit", s, 1, 0, nil, hoststore.ErrKindInvalid},
		{"negative limit", s, 1, -1, nil, hoststore.ErrKindInvalid},
		{"malformed scope", sc(0, "s"), 1, 1, nil, hoststore.ErrKindInvalid},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rows, err := m.ReadRows(tc.scope, tc.from, tc.limit)
			wantKind(t, "ReadRows", err, tc.kind)
			if got := rowStrings(rows); len(got)+len(tc.want) > 0 && !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("rows = %v, want %v", got, tc.want)
			}
		})
	}
	rows, _ := m.ReadRows(s, 1, 10)
	rows[0].Data[0] = 'X'
	_ = append(rows[0].Data, 'Y') // must not reach the next row
	again, _ := m.ReadRows(s, 1, 10)
	if got := rowStrings(again); !reflect.DeepEqual(got, []string{"1:r1", "2:r2", "3:r3"}) {
		t.Fatalf("rows after changing an answer = %v: answers are not copies", got)
	}
	if string(rows[1].Data) != "r2" {
		t.Fatalf("appending to one answered row changed the next: %q", rows[1].Data)
	}
}
