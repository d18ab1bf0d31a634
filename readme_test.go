package conform_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// maxReadme is the most bytes README.md may hold (`wc -c`); the rest of
// the documentation lives in docs/.
const maxReadme = 8000

// mystore is the package the README's snippet imports: a store author's
// own, here a fresh reference realm per call.
const mystore = `// Package mystore stands for the store of the README's snippet.
package mystore

import (
	"context"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/reference"
)

// NewRealm returns a factory over a fresh, empty realm.
func NewRealm(ctx context.Context) (hoststore.HostStoreFactory, error) {
	return reference.NewFactory(), nil
}
`

// goBlock matches a fenced Go block of a Markdown file; group 1 is its
// text.
var goBlock = regexp.MustCompile("(?ms)^```go\n(.*?)^```")

// TestREADME checks that README.md stays short and that its certification
// snippet compiles as written: the first Go block holding harness.Run goes
// into a module of its own beside a stub example.com/mystore, over this
// repository, and must pass go vet.
func TestREADME(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(readme); n > maxReadme {
		t.Errorf("README.md holds %d bytes, more than %d: move the rest into docs/", n, maxReadme)
	}
	snippet := certificationSnippet(readme)
	if snippet == "" {
		t.Fatal("README.md has no ```go block holding harness.Run")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("the snippet is not compiled: no go tool on PATH (%v)", err)
	}
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	goMod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goSum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/mystore\n\n" + goDirective(goMod) +
			"\nrequire github.com/conform-spi/conform v0.0.0\n\nreplace github.com/conform-spi/conform => " + root + "\n",
		"go.sum":          string(goSum),
		"mystore.go":      mystore,
		"conform_test.go": snippet,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(goTool, "vet", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the README's snippet does not compile as written: go vet: %v\n%s\nthe snippet:\n%s", err, out, snippet)
	}
}

// certificationSnippet returns the first Go block of readme that holds
// harness.Run, or "" when none does.
func certificationSnippet(readme []byte) string {
	for _, m := range goBlock.FindAllSubmatch(readme, -1) {
		if bytes.Contains(m[1], []byte("harness.Run(")) {
			return string(m[1])
		}
	}
	return ""
}

// goDirective returns the go line of a go.mod, so that the snippet's
// module asks for the same language version as this one.
func goDirective(goMod []byte) string {
	for _, line := range strings.Split(string(goMod), "\n") {
		if strings.HasPrefix(line, "go ") {
			return line + "\n"
		}
	}
	return ""
}
