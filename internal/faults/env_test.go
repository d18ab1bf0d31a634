package faults

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/conform-spi/conform/instore"
	"github.com/pingcap/failpoint"
)

// TestGoFailpointsEnvDisabled runs this test binary again with
// GO_FAILPOINTS naming conform's failpaths, and checks there that init
// disabled them.
func TestGoFailpointsEnvDisabled(t *testing.T) {
	if os.Getenv("CONFORM_FAULTS_ENV_CHILD") == "1" {
		if len(envDisabled) != 2 {
			t.Fatalf("init disabled %v, want the two conform failpaths", envDisabled)
		}
		for _, p := range []string{failpath(instore.CommitLocked), WrapCommitBeforeSend.Failpath()} {
			if terms, err := failpoint.Status(p); err == nil {
				t.Fatalf("%s still enabled with %q", p, terms)
			}
		}
		if terms, err := failpoint.Status("other/path"); err != nil || terms != "return(1)" {
			t.Fatalf("another failpath: %q, %v; want it left enabled", terms, err)
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestGoFailpointsEnvDisabled$", "-test.count=1")
	cmd.Env = append(os.Environ(), "CONFORM_FAULTS_ENV_CHILD=1",
		`GO_FAILPOINTS=conform/commit-locked=pause;other/path=return(1);conform/wrap/commit-before-send=return("kill")`)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "PASS") {
		t.Fatalf("child run: %v\n%s", err, out)
	}
}
