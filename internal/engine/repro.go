package engine

import (
	"sort"

	"github.com/conform-spi/conform/internal/settings"
)

// Repro names one run again exactly (see settings.Repro).
type Repro = settings.Repro

// ParseRepro reads a repro token, refusing anything it does not know with
// an error that names the part.
func ParseRepro(s string) (Repro, error) { return settings.ParseRepro(s) }

// fenceRepro reports whether r names a run of `conform fences`: it
// carries fences=, or its row is one of the fences' chapters (a repro
// written before the fences had their own command names conform's own
// fences so).
func fenceRepro(r Repro) bool {
	return r.Fences != "" || r.Row != "" && commandOf(r.Row) == "fences"
}

func sortedCopy(ss []string) []string {
	out := append([]string(nil), ss...)
	sort.Strings(out)
	return out
}
