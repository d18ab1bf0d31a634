package obligation

import (
	"fmt"
	"strings"
)

// contractDoc is the document every anchor of docs/obligations.tsv points
// into.
const contractDoc = "docs/host-store-contract.md"

// TSV returns c as docs/obligations.tsv holds it: one line per obligation,
// its ID, title, statement and anchor in host-store-contract.md separated by
// tabs. It returns an error for an obligation that docs/obligations.tsv
// cannot hold: a field with a tab or a newline, or a doc outside
// host-store-contract.md.
func (c Catalogue) TSV() ([]byte, error) {
	var b strings.Builder
	for _, o := range c {
		anchor, ok := strings.CutPrefix(o.Doc, contractDoc)
		if !ok || !strings.HasPrefix(anchor, "#") {
			return nil, fmt.Errorf("obligation %s: doc %q is no anchor of %s", o.ID, o.Doc, contractDoc)
		}
		fields := []string{string(o.ID), o.Title, o.Statement, anchor}
		for _, f := range fields {
			if f == "" || strings.ContainsAny(f, "\t\r\n") {
				return nil, fmt.Errorf("obligation %s: field %q is empty or holds a tab or a newline", o.ID, f)
			}
		}
		b.WriteString(strings.Join(fields, "\t"))
		b.WriteByte('\n')
	}
	return []byte(b.String()), nil
}
