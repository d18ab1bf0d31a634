// Package host is the host store chapter: ten rows, one file per row
// family, that drive a store through the Host Store SPI and compare every
// answer with the reference.
package host

import (
	"context"

	"github.com/conform-spi/conform/internal/chapter"
	"github.com/conform-spi/conform/reports"
)

// ID is the host store chapter's name and label.
const ID reports.ChapterID = "host-store"

// Title is the chapter's title in the reports.
const Title = "Host store chapter"

// Chapter returns the host store chapter, over one host-store realm.
func Chapter() chapter.Chapter {
	return chapter.Chapter{ID: ID, Title: Title, Rows: Rows}
}

// Rows returns the chapter's rows in the order they run.
func Rows() []*chapter.Row {
	return []*chapter.Row{
		rowAcquireEmpty(),
		rowReopen(),
		rowKill(),
		rowStaleFence(),
		rowTakeover(),
		rowSameVersion(),
		rowRetry(),
		rowRowsRemovalListing(),
		rowIndependence(),
		rowStalledCommit(),
	}
}

// env is the chapter's Env with the host rows' own helpers.
type env struct{ *chapter.Env }

// it registers one spec of a row whose body gets an env.
func it(s *chapter.Specs, text string, obligations []reports.ObligationID, body func(ctx context.Context, e *env)) {
	s.It(text, obligations, func(ctx context.Context, e *chapter.Env) { body(ctx, &env{e}) })
}
