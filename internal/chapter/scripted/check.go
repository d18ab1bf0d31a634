package scripted

import (
	"fmt"
	"strings"

	"github.com/conform-spi/conform/internal/spec"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/chapter"
	"github.com/conform-spi/conform/internal/writer"
)

// Value returns the value of a scope the run wrote, through p.
func (l *Lab) Value(p *chapter.Proc, sc hoststore.ScopeRef) ([]byte, bool) {
	spec.Helper()
	h, err := p.Load(l.Ctx, sc)
	if err != nil {
		l.Fail(chapter.ObOperations, fmt.Sprintf("LoadHead(%s) failed", sc), "a head or none", chapter.ErrText(err))
	}
	if h == nil {
		return nil, false
	}
	v, err := writer.ReadValue(l.Ctx, procStore{p: p, timing: l.Timing}, h.Head)
	if err != nil {
		l.Fail(chapter.ObAllOrNothing, fmt.Sprintf("the value of %s cannot be read whole", sc), "the value the run committed, with every chunk", chapter.ErrText(err))
	}
	return v, true
}

// Rows returns every visible row of sc through p, from index 0.
func (l *Lab) Rows(p *chapter.Proc, sc hoststore.ScopeRef) []hoststore.Row {
	spec.Helper()
	var out []hoststore.Row
	for from := hoststore.RowIndex(0); ; {
		rs, err := p.Read(l.Ctx, sc, from, chapter.ReadPage)
		if err != nil {
			l.Fail(chapter.ObOperations, fmt.Sprintf("ReadRows(%s, from %d) failed", sc, from), "rows", chapter.ErrText(err))
		}
		out = append(out, rs...)
		if len(rs) < chapter.ReadPage {
			return out
		}
		from = rs[len(rs)-1].Index + 1
	}
}

// listAll lists every visible head of kind through p.
func (l *Lab) listAll(p *chapter.Proc, kind hoststore.ScopeKind) []hoststore.NamedHead {
	spec.Helper()
	var out []hoststore.NamedHead
	var after *hoststore.ScopeName
	for i := 0; ; i++ {
		pg, err := p.List(l.Ctx, kind, after, 200)
		if err != nil {
			l.Fail(chapter.ObOperations, fmt.Sprintf("ListHeads(%s) failed", kind), "a page", chapter.ErrText(err))
		}
		out = append(out, pg.Heads...)
		if pg.Next == nil || i > 1<<12 {
			return out
		}
		after = pg.Next
	}
}

// CheckGarbage fails the spec when a chunk scope of the spec survives that
// no visible head refers to ("the writer deletes such chunks when it opens the
// realm"), or when a head refers to a chunk scope that is not there.
func (l *Lab) CheckGarbage(p *chapter.Proc) {
	spec.Helper()
	refs := map[hoststore.ScopeName]hoststore.ScopeName{}
	chunks := map[hoststore.ScopeName]bool{}
	for _, k := range hoststore.AllKinds {
		for _, h := range l.listAll(p, k) {
			s := hoststore.ScopeRef{Kind: k, Name: h.Name}
			if writer.IsChunk(l.opts.ChunkPrefix, s) {
				chunks[h.Name] = true
			} else if n, ok := writer.Refs(h.Head.Head); ok && strings.HasPrefix(string(h.Name), l.Prefix+"/") {
				refs[n] = h.Name
			}
		}
	}
	for n := range chunks {
		if _, ok := refs[n]; !ok {
			l.Fail(chapter.ObWriter, fmt.Sprintf("chunk scope %q survived the open, yet no visible head refers to it", n),
				"no garbage chunk after an open (Core deletes unreferenced chunks when it opens the realm)", "an unreferenced chunk scope")
		}
	}
	for n, by := range refs {
		if !chunks[n] {
			l.Fail(chapter.ObAllOrNothing, fmt.Sprintf("%q refers to chunk scope %q, which is not visible", by, n),
				"every chunk a visible head refers to is visible (its batch landed before the commit batch)", "a missing chunk scope")
		}
	}
}
