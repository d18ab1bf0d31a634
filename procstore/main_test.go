package procstore_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/procstore/serve"
	"github.com/conform-spi/conform/reference"
	"github.com/conform-spi/conform/stores/sqlite"
)

// The test binary is also the store processes of these tests: with
// PROCSTORE_CHILD set it is one and runs no test.
const (
	envChild  = "PROCSTORE_CHILD"     // serve-sqlite, serve-reference or tee
	envTeeCmd = "PROCSTORE_TEE_CMD"   // the store process a tee runs, split at spaces
	envTeeLog = "PROCSTORE_TEE_LOG"   // the file a tee appends every line to
	envTarget = "PROCSTORE_TEE_CHILD" // what a tee's target runs as PROCSTORE_CHILD
)

func TestMain(m *testing.M) {
	switch os.Getenv(envChild) {
	case "":
		os.Exit(m.Run())
	case "serve-sqlite":
		serve.Main("sqlite", openSQLite)
	case "serve-reference": // one process's own realm: for benchmarks, not for a run
		serve.Main("reference", func(context.Context, string) (hoststore.HostStoreFactory, error) {
			return reference.NewFactory(), nil
		})
	case "tee":
		os.Exit(tee())
	default:
		fmt.Fprintf(os.Stderr, "unknown %s %q\n", envChild, os.Getenv(envChild))
		os.Exit(2)
	}
}

func openSQLite(ctx context.Context, realm string) (hoststore.HostStoreFactory, error) {
	return sqlite.New(ctx, filepath.Join(realm, "realm.db"))
}

// tee runs the store process $PROCSTORE_TEE_CMD between the harness and
// itself, copying every line both ways and appending it to
// $PROCSTORE_TEE_LOG as "PID H|S LINE" (H: the harness wrote it, S: the
// store). It exits when the store does, with its status.
func tee() int {
	argv := strings.Fields(os.Getenv(envTeeCmd))
	log, err := os.OpenFile(os.Getenv(envTeeLog), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil || len(argv) == 0 {
		fmt.Fprintln(os.Stderr, "tee:", err, argv)
		return 2
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), envChild+"="+os.Getenv(envTarget))
	cmd.Stderr = os.Stderr
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "tee:", err)
		return 2
	}
	var mu sync.Mutex // one line at a time in the log
	pid := os.Getpid()
	copyLines := func(dir string, r io.Reader, w io.Writer) {
		br := bufio.NewReaderSize(r, 1<<20)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				mu.Lock()
				fmt.Fprintf(log, "%d %s %s", pid, dir, line)
				if line[len(line)-1] != '\n' {
					fmt.Fprintln(log)
				}
				mu.Unlock()
				_, _ = w.Write(line)
			}
			if err != nil {
				return
			}
		}
	}
	go func() {
		copyLines("H", os.Stdin, in)
		in.Close()
	}()
	copyLines("S", out, os.Stdout)
	if err := cmd.Wait(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		return 1
	}
	return 0
}
