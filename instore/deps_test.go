package instore_test

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// depsCase is one package whose non-test dependencies must stay free of the
// injector.
type depsCase struct {
	dir    string // where go list runs: the module's directory
	pkg    string
	strict bool // also no net/http and no os/exec
	// only, when set, lists every package outside the standard library
	// that pkg may depend on.
	only []string
}

// A store links instore and what it needs itself, never the harness's
// injector: pingcap/failpoint's init exits on a malformed GO_FAILPOINTS and
// starts an HTTP server when GO_FAILPOINTS_HTTP is set. memlog stands for
// a third-party store in a module of its own; instore is what every store
// links.
var depsCases = []depsCase{
	{dir: "../examples/thirdparty", pkg: "./memlog", strict: true},
	{dir: "..", pkg: "./instore", strict: true, only: []string{
		"github.com/conform-spi/conform/instore",
		"github.com/conform-spi/conform/hoststore",
		"github.com/conform-spi/conform/internal/hook",
	}},
	{dir: "..", pkg: "./stores/sqlite"},
	{dir: "..", pkg: "./stores/postgres"},
	{dir: "..", pkg: "./stores/appendonly"},
}

func TestStoresLinkNoInjector(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is not on PATH: %v", err)
	}
	for _, c := range depsCases {
		t.Run(c.pkg, func(t *testing.T) {
			cmd := exec.Command(goTool, "list", "-deps", "-f", "{{.ImportPath}} {{.Standard}}", c.pkg)
			cmd.Dir = c.dir
			cmd.Env = append(os.Environ(), "GOWORK=off")
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("go list -deps %s in %s: %v\n%s", c.pkg, c.dir, err, stderr.String())
			}
			deps := strings.Split(strings.TrimSpace(string(out)), "\n")
			t.Logf("go list -deps %s: %d packages", c.pkg, len(deps))
			var linksInstore bool
			for _, line := range deps {
				d, std, ok := strings.Cut(line, " ")
				if !ok {
					t.Fatalf("go list printed %q, want a path and whether it is standard", line)
				}
				if c.only != nil && std != "true" && !slices.Contains(c.only, d) {
					t.Errorf("%s depends on %s; outside the standard library it may depend on %v only", c.pkg, d, c.only)
				}
				if strings.Contains(d, "pingcap") {
					t.Errorf("%s links %s", c.pkg, d)
				}
				if c.strict && (d == "net/http" || d == "os/exec") {
					t.Errorf("%s links %s", c.pkg, d)
				}
				linksInstore = linksInstore || d == "github.com/conform-spi/conform/instore"
			}
			if !linksInstore {
				t.Errorf("%s does not link instore; its %d dependencies cannot show what a store links", c.pkg, len(deps))
			}
		})
	}
}
