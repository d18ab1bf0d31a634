// Command conform certifies a Host Store SPI store: it runs the conformance
// chapters over the store a URL names and writes the reports. Everything
// real lives in package harness; this file maps the stores we ship onto
// URL schemes.
package main

import (
	"context"
	"fmt"
	"io"

	"github.com/conform-spi/conform/admission"
	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/engine"
	"github.com/conform-spi/conform/reference"
)

// extraOpeners are stores added by build-tagged files.
var extraOpeners = map[string]engine.Opener{}

func main() {
	openers := map[string]engine.Opener{
		"reference":         openReference,
		"sqlite":            openSQLite(),
		"appendonly+sqlite": openAppendOnly(),
		"postgres":          openPostgres,
		"postgresql":        openPostgres,
	}
	for k, v := range extraOpeners {
		openers[k] = v
	}
	engine.Command{
		Openers: openers,
		Default: "reference:",
		Extra: map[string]func(args []string, stdout, stderr io.Writer) int{
			"hosts-fences": admission.HostsFencesMain,
		},
	}.Main()
}

// openReference opens the embedded in-memory reference store: every realm
// is a new, empty one. The URL takes nothing after the scheme.
func openReference(_ context.Context, url string) (engine.NewRealm, error) {
	if url != "reference:" {
		return nil, fmt.Errorf("the reference store's URL is just %q", "reference:")
	}
	return func(context.Context) (hoststore.HostStoreFactory, error) { return reference.NewFactory(), nil }, nil
}
