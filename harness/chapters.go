package harness

import (
	"github.com/conform-spi/conform/internal/chapter"
	"github.com/conform-spi/conform/internal/chapter/explore"
	"github.com/conform-spi/conform/internal/chapter/fences"
	"github.com/conform-spi/conform/internal/chapter/host"
	"github.com/conform-spi/conform/internal/chapter/longrun"
	"github.com/conform-spi/conform/internal/chapter/worker"
)

// chapters returns conform's chapters in the order a run registers them,
// lists them and reports them. Adding a chapter is one line here.
func chapters() []chapter.Chapter {
	return []chapter.Chapter{
		host.Chapter(),
		longrun.Chapter(),
		worker.Chapter(),
		fences.Chapter(),
		explore.Chapter(),
	}
}
