package fences_test

import (
	"regexp"
	"slices"
	"testing"

	"github.com/conform-spi/conform/internal/chapter/fences"
)

// TestCatalogue checks the obligations and rows as data: unique IDs of the
// expected shapes, rows that check only catalogued obligations, and no
// obligation that no row checks.
func TestCatalogue(t *testing.T) {
	obID := regexp.MustCompile(`^adm:[a-z][a-z0-9-]*$`)
	rowID := regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
	checked := map[string]bool{}
	seen := map[string]bool{}
	for _, row := range fences.Rows() {
		if !rowID.MatchString(row.ID) || seen[row.ID] {
			t.Errorf("row ID %q: not a lower-case slug, or twice", row.ID)
		}
		seen[row.ID] = true
		if row.Name == "" || len(row.Obligations) == 0 {
			t.Errorf("row %s: no name or no obligations", row.ID)
		}
		for _, ob := range row.Obligations {
			if _, ok := fences.ObligationByID(ob); !ok {
				t.Errorf("row %s checks %s, which is not in the catalogue", row.ID, ob)
			}
			checked[ob] = true
		}
		labels := row.Labels()
		if labels[0] != fences.RowLabelPrefix+row.ID || !slices.Contains(labels, row.Obligations[0]) {
			t.Errorf("row %s: labels %v", row.ID, labels)
		}
	}
	ids := map[string]bool{}
	for _, o := range fences.Obligations() {
		if !obID.MatchString(o.ID) || ids[o.ID] {
			t.Errorf("obligation ID %q: not adm:<slug>, or twice", o.ID)
		}
		ids[o.ID] = true
		if o.Title == "" || o.Statement == "" {
			t.Errorf("obligation %s: no title or no statement", o.ID)
		}
		if !checked[o.ID] {
			t.Errorf("obligation %s: no row checks it", o.ID)
		}
	}
}
