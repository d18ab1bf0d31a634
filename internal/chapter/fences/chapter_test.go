package fences_test

import (
	"os"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/conform-spi/conform/internal/chapter/fences"
)

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

func TestChapter(t *testing.T) {
	RegisterFailHandler(Fail)
	impl, child := os.LookupEnv(envChild)
	cfg := fences.Config{Repro: func(row string) string {
		env := ""
		if child {
			env = envChild + "=" + impl + " "
		}
		return env + "go test ./internal/chapter/fences -run '^TestChapter$' -args -ginkgo.label-filter='" + fences.RowLabelPrefix + row + "'"
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
	fences.Register(cfg)
	RunSpecs(t, "Realm admission fences chapter")
}
