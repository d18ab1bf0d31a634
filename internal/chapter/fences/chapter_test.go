package fences_test

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/conform-spi/conform/internal/chapter/fences"
	"github.com/conform-spi/conform/internal/spec"
)

// labelFilter selects the rows TestChapter runs, in Ginkgo's label syntax.
var labelFilter = flag.String("label-filter", "", "select rows by label, e.g. 'row:adm-try'")

func TestMain(m *testing.M) {
	fences.ServeHelperIfRequested()
	os.Exit(m.Run())
}

// envChild, set, makes TestChapter a child of TestCanaries: it names the
// implementation the child certifies, a canary of fences.Canaries or
// "correct", and the child drives it through an explicit Config.Command.
const envChild = "CONFORM_ADMISSION_CANARY_CHILD"

// envChildUnsupported, set in such a child, is handed to its helpers as
// fences.UnsupportedEnv.
const envChildUnsupported = "CONFORM_ADMISSION_CANARY_UNSUPPORTED"

// envChildCommand, set in such a child, is the helper's command, words
// separated by spaces, in place of the test executable.
const envChildCommand = "CONFORM_ADMISSION_CANARY_COMMAND"

// envChildResults, set in such a child, is where it writes its specs'
// results as JSON.
const envChildResults = "CONFORM_ADMISSION_CANARY_RESULTS"

func TestChapter(t *testing.T) {
	impl, child := os.LookupEnv(envChild)
	cfg := fences.Config{Repro: func(row string) string {
		env := ""
		if child {
			env = envChild + "=" + impl + " "
		}
		return env + "go test ./internal/chapter/fences -run '^TestChapter$' -args -label-filter='" + fences.RowLabelPrefix + row + "'"
	}}
	if child {
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		cfg.Command = []string{exe}
		if cmd := os.Getenv(envChildCommand); cmd != "" {
			cfg.Command = strings.Fields(cmd)
		}
		if impl != "correct" {
			cfg.Env = append(cfg.Env, fences.FencesBugEnv+"="+impl)
		}
		if cmds := os.Getenv(envChildUnsupported); cmds != "" {
			cfg.Env = append(cfg.Env, fences.UnsupportedEnv+"="+cmds)
		}
	}
	match, err := spec.ParseFilter(*labelFilter)
	if err != nil {
		t.Fatal(err)
	}
	tree := spec.NewTree()
	fences.Register(tree, cfg)
	rep := spec.Run(context.Background(), tree, spec.Config{Filter: match})
	for _, r := range rep.Specs {
		if r.State.Failure() {
			t.Errorf("%s: %s\n%s", r.FullText(), r.State, r.Message)
		}
	}
	if path := os.Getenv(envChildResults); path != "" {
		b, err := json.Marshal(rep.Specs)
		if err == nil {
			err = os.WriteFile(path, b, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}
