package engine

import (
	"slices"

	"github.com/conform-spi/conform/internal/chapter"
	"github.com/conform-spi/conform/internal/chapter/explore"
	"github.com/conform-spi/conform/internal/chapter/fences"
	"github.com/conform-spi/conform/internal/chapter/host"
	"github.com/conform-spi/conform/internal/chapter/longrun"
	"github.com/conform-spi/conform/internal/chapter/worker"
)

// storeChapters returns the chapters that certify a store, in the order a
// run registers them, lists them and reports them: `conform run`, Run
// and Register run these. Adding a chapter is one line here.
func storeChapters() []chapter.Chapter {
	return []chapter.Chapter{
		host.Chapter(),
		longrun.Chapter(),
		worker.Chapter(),
		explore.Chapter(),
	}
}

// isStoreChapter reports whether c is one of storeChapters.
func isStoreChapter(c chapter.Chapter) bool {
	return slices.ContainsFunc(storeChapters(), func(s chapter.Chapter) bool { return s.ID == c.ID })
}

// fenceChapters returns the chapters that certify an implementation of
// admission fences, which `conform fences` runs. They need no store.
func fenceChapters() []chapter.Chapter {
	return []chapter.Chapter{fences.Chapter()}
}

// A certifier is a command that certifies something, and its chapters.
type certifier struct {
	command  string // "run" or "fences"
	chapters func() []chapter.Chapter
}

// certifiers returns the commands that certify, in the order `conform
// list` shows their chapters.
func certifiers() []certifier {
	return []certifier{{"run", storeChapters}, {"fences", fenceChapters}}
}

// allChapters returns the chapters of every command, as `conform list`
// shows them.
func allChapters() []chapter.Chapter {
	var out []chapter.Chapter
	for _, c := range certifiers() {
		out = append(out, c.chapters()...)
	}
	return out
}

// commandOf returns the command whose chapters hold row id, or "".
func commandOf(id string) string {
	for _, c := range certifiers() {
		for _, ch := range c.chapters() {
			for _, r := range ch.Rows() {
				if string(r.ID) == id {
					return c.command
				}
			}
		}
	}
	return ""
}

// chaptersOf returns the chapters a run with o runs: fenceChapters for a
// fences run (Options.RunsFences), else storeChapters.
func chaptersOf(o Options) []chapter.Chapter {
	if o.RunsFences {
		return fenceChapters()
	}
	return storeChapters()
}

// asFencesRun makes a run certify fences: it runs fenceChapters, not a
// store's.
func asFencesRun() Option { return func(o *Options) { o.RunsFences = true } }
