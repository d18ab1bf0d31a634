package procstore_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/conform-spi/conform/harness"
	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/procstore"
)

const envHarnessChild = "PROCSTORE_HARNESS_CHILD" // python or go: what TestSchemaHarnessChild certifies

// schemaRows are the rows TestMessagesMatchTheSchema runs: between them,
// every request, at calls, messages of megabytes (row rows), and every
// error kind but the two a correct store answers only on trouble
// (indeterminate, unavailable).
const schemaRows = "row:acquire-empty || row:kill || row:stale-fence || row:same-version || row:retry || row:rows"

// pythonStore is the Python example's command line.
func pythonStore(t *testing.T) string {
	t.Helper()
	python := "/usr/bin/python3" // scripts/test.sh installs it
	if _, err := os.Stat(python); err != nil {
		t.Fatalf("no %s (scripts/test.sh installs it): %v", python, err)
	}
	script, err := filepath.Abs("../examples/python-sqlite/store.py")
	if err != nil {
		t.Fatal(err)
	}
	return python + " " + script
}

// TestMessagesMatchTheSchema certifies a few rows of the host store
// chapter over the Python example and over the SQLite store served by
// package serve (conform-serve), logging every line of both directions,
// and checks each against docs/store-process-protocol.schema.json, each ok
// result against the result of its request's op.
func TestMessagesMatchTheSchema(t *testing.T) {
	s, err := loadSchema("../docs/store-process-protocol.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"python", "go"} {
		t.Run(target, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			logPath := filepath.Join(dir, "lines")
			store := pythonStore(t)
			if target == "go" {
				store = conformServe(t) + " sqlite"
			}
			// harness.Run runs once per process: a child runs it.
			cmd := exec.Command(os.Args[0], "-test.run", "^TestSchemaHarnessChild$", "-test.v", "-test.count=1")
			cmd.Env = append(os.Environ(), envHarnessChild+"="+store, envLog+"="+logPath, "CONFORM_REPORT_DIR="+filepath.Join(dir, "report"))
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("the harness over %s: %v\n%s", store, err, out)
			}
			checkLog(t, s, logPath)
		})
	}
}

const envLog = "PROCSTORE_LOG" // where TestSchemaHarnessChild logs every line

// TestSchemaHarnessChild is TestMessagesMatchTheSchema's child: it runs
// the rows over the store process it names, logging every line as
// "PID H|S LINE".
func TestSchemaHarnessChild(t *testing.T) {
	store := os.Getenv(envHarnessChild)
	if store == "" {
		t.Skip("run by TestMessagesMatchTheSchema")
	}
	log, err := os.Create(os.Getenv(envLog))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	var mu sync.Mutex
	procstore.SetTrace(func(pid int, dir byte, line []byte) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(log, "%d %c %s\n", pid, dir, line)
	})
	defer procstore.SetTrace(nil)
	argv, err := procstore.ParseCommand(store)
	if err != nil {
		t.Fatal(err)
	}
	harness.Run(t, func(context.Context) (hoststore.HostStoreFactory, error) {
		return procstore.New(argv)
	}, harness.WithLabelFilter(schemaRows), harness.WithStore("exec:"+store),
		// The lines are what this test checks, not the time.
		harness.WithCallTimeout(time.Minute))
}

// resultDef is the schema definition of an ok result of op.
func resultDef(op string) string {
	switch op {
	case "renew_fence", "commit", "lapse_fence_leases":
		return "empty_result"
	}
	return op + "_result"
}

func checkLog(t *testing.T, s *schema, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ops := map[string]string{} // "pid id" -> op
	seen := map[string]int{}
	br := bufio.NewReaderSize(f, 1<<20)
	n := 0
	for {
		line, err := br.ReadBytes('\n')
		if len(line) == 0 {
			if err == nil {
				continue
			}
			break
		}
		n++
		pid, rest, _ := bytes.Cut(line, []byte(" "))
		dir, msg, _ := bytes.Cut(rest, []byte(" "))
		msg = bytes.TrimSuffix(msg, []byte("\n"))
		var head struct {
			ID    *uint64         `json:"id"`
			Call  *uint64         `json:"call"`
			Op    string          `json:"op"`
			OK    json.RawMessage `json:"ok"`
			Error *struct {
				Kind string `json:"kind"`
			} `json:"error"`
		}
		_ = json.Unmarshal(msg, &head)
		def := "harness_message"
		if string(dir) == "S" {
			def = "store_message"
		}
		if err := s.check(msg, def); err != nil {
			t.Errorf("line %d (%s): %v\n%s", n, def, err, clip(msg))
			continue
		}
		if head.ID == nil {
			if head.Op != "" {
				seen["call "+head.Op]++
			}
			continue
		}
		key := string(pid) + " " + strconv.FormatUint(*head.ID, 10)
		if string(dir) == "H" {
			ops[key] = head.Op
			seen[head.Op]++
			continue
		}
		op := ops[key]
		if op == "" {
			t.Errorf("line %d: an answer to id %d that the harness never sent", n, *head.ID)
			continue
		}
		if head.Error != nil {
			seen["error "+head.Error.Kind]++
			continue
		}
		if err := s.check(head.OK, resultDef(op)); err != nil {
			t.Errorf("line %d (%s): %v\n%s", n, resultDef(op), err, clip(msg))
		}
	}
	t.Logf("%d lines checked: %v", n, seen)
	for _, want := range []string{"hello", "acquire_fence", "renew_fence", "load_head", "list_heads", "read_rows", "commit", "lapse_fence_leases", "call at", "error held", "error fenced_out", "error conflict", "error invalid"} {
		if seen[want] == 0 {
			t.Errorf("no %q in the log: the chapter did not exercise it", want)
		}
	}
}

func clip(b []byte) string {
	s := string(b)
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return strings.TrimSpace(s)
}
