package serve_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"testing"

	"github.com/conform-spi/conform/procstore/serve"
	"github.com/conform-spi/conform/reference"
)

// peer is the harness's side of a Serve over pipes.
type peer struct {
	t   *testing.T
	in  io.WriteCloser
	out *bufio.Reader
}

func (p *peer) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatal(err)
	}
}

func (p *peer) read() map[string]any {
	p.t.Helper()
	line, err := p.out.ReadBytes('\n')
	if err != nil {
		p.t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(line, &m); err != nil {
		p.t.Fatalf("%q: %v", line, err)
	}
	return m
}

func startServe(t *testing.T) (*peer, <-chan error) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- serve.Serve(context.Background(), "reference", reference.NewFactory(), inR, outW)
		outW.Close()
	}()
	return &peer{t: t, in: inW, out: bufio.NewReader(outR)}, done
}

// TestServeForwardsSites commits twice: with sites true the commit makes
// one at call per site, in order, and waits for each answer; with sites
// false it makes none.
func TestServeForwardsSites(t *testing.T) {
	p, done := startServe(t)
	p.send(`{"id":0,"op":"hello","versions":[1]}`)
	if m := p.read(); m["ok"].(map[string]any)["version"] != float64(1) {
		t.Fatalf("hello answered %v", m)
	}
	p.send(`{"id":1,"op":"acquire_fence","mode":"exclusive"}`)
	if m := p.read(); m["ok"].(map[string]any)["token"] != float64(1) {
		t.Fatalf("acquire answered %v", m)
	}
	p.send(`{"id":2,"op":"commit","sites":true,"batch":{"commit_id":"c1","token":1,"updates":[{"scope":{"kind":"Mob","name":"m"},"next":1,"head":""}]}}`)
	for i, site := range []string{"commit-locked", "commit-before-point", "commit-after-point"} {
		m := p.read()
		if m["op"] != "at" || m["site"] != site || m["req"] != float64(2) || m["commit_id"] != "c1" || m["call"] != float64(i) {
			t.Fatalf("at call %d: %v, want %s for request 2", i, m, site)
		}
		p.send(fmt.Sprintf(`{"call":%d,"ok":{}}`, i))
	}
	if m := p.read(); m["id"] != float64(2) || m["ok"] == nil {
		t.Fatalf("commit answered %v", m)
	}
	p.send(`{"id":3,"op":"commit","sites":false,"batch":{"commit_id":"c2","token":1,"updates":[{"scope":{"kind":"Mob","name":"m"},"previous":1,"next":2,"append":["cm93"]}]}}`)
	if m := p.read(); m["id"] != float64(3) || m["ok"] == nil {
		t.Fatalf("commit without sites answered %v, want its answer and no at call", m)
	}
	p.send(`{"id":4,"op":"read_rows","scope":{"kind":"Mob","name":"m"},"from":0,"limit":5}`)
	m := p.read()
	rows := m["ok"].(map[string]any)["rows"].([]any)
	if len(rows) != 1 || rows[0].(map[string]any)["data"] != "cm93" {
		t.Fatalf("read_rows answered %v", m)
	}
	p.in.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestServeStopsHeldCommitAtEnd ends the input while a commit waits at a
// site: Serve returns, and the commit is answered as stopped.
func TestServeStopsHeldCommitAtEnd(t *testing.T) {
	p, done := startServe(t)
	p.send(`{"id":0,"op":"hello","versions":[1]}`)
	p.read()
	p.send(`{"id":1,"op":"acquire_fence","mode":"exclusive"}`)
	p.read()
	p.send(`{"id":2,"op":"commit","batch":{"commit_id":"c1","token":1,"updates":[{"scope":{"kind":"Mob","name":"m"},"next":1,"head":""}]}}`)
	if m := p.read(); m["op"] != "at" {
		t.Fatalf("want an at call, got %v", m)
	}
	p.in.Close()
	m := p.read()
	if m["id"] != float64(2) || m["error"] == nil {
		t.Fatalf("the held commit answered %v, want an error", m)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
