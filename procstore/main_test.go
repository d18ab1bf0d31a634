package procstore_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/procstore/serve"
	"github.com/conform-spi/conform/reference"
)

// With PROCSTORE_CHILD=serve-reference the test binary is a store process
// (for the benchmark, which runs without -race), with PROCSTORE_CHILD=fake
// a scripted one (see fake), and runs no test.
const envChild = "PROCSTORE_CHILD"

// serveBinary is cmd/conform-serve, built once without -race: a store
// process of a race-built test binary would take a large part of a second
// to start.
var (
	serveDir    string
	serveOnce   sync.Once
	serveBinary string
	serveErr    error
)

func TestMain(m *testing.M) {
	switch os.Getenv(envChild) {
	case "":
	case "serve-reference": // one process's own realm: for benchmarks, not for a run
		serve.Main("reference", func(context.Context, string) (hoststore.HostStoreFactory, error) {
			return reference.NewFactory(), nil
		})
		return
	case "fake":
		fake()
		return
	default:
		fmt.Fprintf(os.Stderr, "unknown %s %q\n", envChild, os.Getenv(envChild))
		os.Exit(2)
	}
	dir, err := os.MkdirTemp("", "procstore-test-")
	if err != nil {
		panic(err)
	}
	serveDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// conformServe returns the path of conform-serve, building it first.
func conformServe(t testing.TB) string {
	t.Helper()
	serveOnce.Do(func() {
		serveBinary = filepath.Join(serveDir, "conform-serve")
		out, err := exec.Command("go", "build", "-o", serveBinary, "../cmd/conform-serve").CombinedOutput()
		if err != nil {
			serveErr = fmt.Errorf("building conform-serve: %v\n%s", err, out)
		}
	})
	if serveErr != nil {
		t.Fatal(serveErr)
	}
	return serveBinary
}

// envFake is a fake store process's script: lines separated by "|", one
// written after each line read; "<id>" in a line is the id of the request
// just read.
const envFake = "PROCSTORE_FAKE"

// fake plays envFake's script, then reads on until its input ends.
func fake() {
	script := strings.Split(os.Getenv(envFake), "|")
	br := bufio.NewReader(os.Stdin)
	for _, out := range script {
		line, err := br.ReadBytes('\n')
		if err != nil {
			return
		}
		var req struct{ ID uint64 }
		_ = json.Unmarshal(line, &req)
		fmt.Println(strings.ReplaceAll(out, "<id>", strconv.FormatUint(req.ID, 10)))
	}
	_, _ = io.Copy(io.Discard, br)
}
