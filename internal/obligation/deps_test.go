package obligation

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestNoTestFramework fails when the checker or this catalogue links Ginkgo
// or Gomega: both must stay plain Go that any caller can run.
func TestNoTestFramework(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list the dependencies with")
	}
	pkgs := []string{
		"github.com/conform-spi/conform/internal/explore",
		"github.com/conform-spi/conform/internal/obligation",
	}
	out, err := exec.Command(gobin, append([]string{"list", "-deps"}, pkgs...)...).Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	for _, p := range pkgs {
		if !slices.Contains(deps, p) {
			t.Fatalf("go list -deps does not list %s itself: %q", p, deps)
		}
	}
	for _, d := range deps {
		if strings.HasPrefix(d, "github.com/onsi/ginkgo") || strings.HasPrefix(d, "github.com/onsi/gomega") {
			t.Errorf("%s is among the dependencies of %s", d, strings.Join(pkgs, " and "))
		}
	}
}
