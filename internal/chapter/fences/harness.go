package fences

import (
	"github.com/conform-spi/conform/internal/spec"

	"github.com/conform-spi/conform/internal/chapter"
	"github.com/conform-spi/conform/reports"
)

// ID is the chapter's ID: its label is "chapter:admission".
const ID reports.ChapterID = "admission"

// Title is the chapter's title.
const Title = "Realm admission fences"

// rowPrefix prefixes each row's ID in the harness, as RowLabelPrefix does
// in its label.
const rowPrefix = "adm-"

// Chapter returns the chapter as the harness runs it: its rows, its
// obligations, and a Register that drives the helper the run's settings
// name (Settings.FencesHelper). A run that names none leaves it out.
func Chapter() chapter.Chapter {
	return chapter.Chapter{
		ID:          ID,
		Title:       Title,
		Rows:        harnessRows,
		Register:    register,
		Runs:        func(cfg chapter.Config) bool { return cfg.Settings.FencesHelper() != nil },
		Obligations: catalogue(),
	}
}

// harnessRows returns the rows as the framework lists them. Their Specs
// only describe the one spec of each row, for listing and selection; the
// chapter registers its specs itself.
func harnessRows() []*chapter.Row {
	var out []*chapter.Row
	for _, s := range Rows() {
		obs := make([]reports.ObligationID, len(s.Obligations))
		for i, o := range s.Obligations {
			obs[i] = reports.ObligationID(o)
		}
		name := s.Name
		out = append(out, &chapter.Row{
			ID: reports.RowID(rowPrefix + s.ID), Name: name, Obligations: obs,
			Specs: func(sp *chapter.Specs) { sp.It(name, obs, nil) },
		})
	}
	return out
}

// register registers the chapter's rows for cfg inside the harness's
// container.
func register(t *spec.Tree, cfg chapter.Config) {
	set := cfg.Settings
	c := Config{Command: set.FencesHelper(), TempDir: set.FencesDir, RowTimeout: set.RowBound()}
	c.Repro = func(id string) string { return set.Repro(reports.RowID(rowPrefix + id)) }
	c = c.WithDefaults()
	t.Describe(Title, chapter.Decorators(t, ID), func() {
		for _, row := range Rows() {
			row.Register(t, &c)
		}
	})
}

// catalogue returns the chapter's obligations in the report's types.
func catalogue() chapter.Catalogue {
	var out chapter.Catalogue
	for _, o := range Obligations() {
		out = append(out, reports.Obligation{ID: reports.ObligationID(o.ID), Title: o.Title, Statement: o.Statement, Doc: "docs/admission-helper-protocol.md"})
	}
	return out
}
