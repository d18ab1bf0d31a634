package scripted

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/chapter"
	"github.com/conform-spi/conform/writer"
)

// Value returns the value of a scope the run wrote, through p.
func (l *Lab) Value(p *chapter.Proc, sc hoststore.ScopeRef) ([]byte, bool) {
	GinkgoHelper()
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
	GinkgoHelper()
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
