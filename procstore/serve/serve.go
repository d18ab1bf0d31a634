// Package serve serves a Go store as a store process
// (docs/store-process-protocol.md): one handle of a
// hoststore.HostStoreFactory over a reader and a writer, usually the
// process's standard input and output. The store's in-store failpoints
// (instore.At) become at calls to the harness.
//
// A program that serves a store needs only Main:
//
//	func main() { serve.Main("mystore", openRealm) }
package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/hook"
	"github.com/conform-spi/conform/procstore/internal/wire"
)

// Main opens the realm that CONFORM_REALM names with open, serves it on
// standard input and output until standard input ends, and exits: with
// status 0, or 1 after writing the error on standard error.
func Main(name string, open func(ctx context.Context, realm string) (hoststore.HostStoreFactory, error)) {
	MainWith(os.Stdout, name, open)
}

// MainWith is Main writing its messages to w instead of standard output.
func MainWith(w io.Writer, name string, open func(ctx context.Context, realm string) (hoststore.HostStoreFactory, error)) {
	ctx := context.Background()
	realm := os.Getenv(wire.EnvRealm)
	if realm == "" {
		fmt.Fprintf(os.Stderr, "%s: %s names no realm; this program is a store process for conform (docs/store-process-protocol.md)\n", name, wire.EnvRealm)
		os.Exit(1)
	}
	f, err := open(ctx, realm)
	if err == nil {
		err = Serve(ctx, name, f, os.Stdin, w)
		if c, ok := f.(io.Closer); ok {
			err = errors.Join(err, c.Close())
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
}

// Serve serves one handle of f on r and w: the handshake (which opens
// the handle), then requests, several at a time, until r ends. It then
// ends the contexts of the requests still running, waits for them, closes
// the handle (io.Closer; a handle without Close is killed, if it is a
// hoststore.Killer) and returns nil, or the error that stopped it.
// name is the store's name for the report.
//
// From the first Serve on, instore.At in this process becomes an at call
// to the harness for the commits a Serve runs (and does nothing for other
// commits): Serve puts its forwarder in internal/hook's slot for good.
// Several Serves may run at once, one per connection.
func Serve(ctx context.Context, name string, f hoststore.HostStoreFactory, r io.Reader, w io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c := &conn{f: f, w: bufio.NewWriter(w), calls: map[uint64]chan *wire.Message{}}
	installForward.Do(func() { hook.Set(forward) })
	br := bufio.NewReaderSize(r, 64<<10)
	err := c.loop(ctx, name, br)
	cancel()
	c.wg.Wait()
	if c.st != nil {
		if cl, ok := c.st.(io.Closer); ok {
			err = errors.Join(err, cl.Close())
		} else if k, ok := c.st.(hoststore.Killer); ok {
			k.Kill()
		}
	}
	return err
}

var installForward sync.Once

type conn struct {
	f  hoststore.HostStoreFactory
	st hoststore.HostStore
	wg sync.WaitGroup

	wmu sync.Mutex
	w   *bufio.Writer

	mu       sync.Mutex
	nextCall uint64
	calls    map[uint64]chan *wire.Message
}

// reqKey carries the request a commit serves to forward, in its context.
type reqKey struct{}

type reqInfo struct {
	c     *conn
	id    uint64
	sites bool // false: the harness has nothing armed, so skip the at calls
}

func (c *conn) loop(ctx context.Context, name string, br *bufio.Reader) error {
	for {
		line, err := br.ReadBytes('\n')
		if len(line) == 0 && err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		var m wire.Message
		if jerr := json.Unmarshal(line, &m); jerr != nil {
			return fmt.Errorf("the harness wrote a line that is no message: %v", jerr)
		}
		switch {
		case m.Call != nil:
			c.mu.Lock()
			ch := c.calls[*m.Call]
			delete(c.calls, *m.Call)
			c.mu.Unlock()
			if ch != nil { // else the commit stopped waiting: its context ended
				ch <- &m
			}
		case m.ID == nil:
			return errors.New("the harness wrote a message with neither id nor call")
		case m.Op == wire.OpHello:
			if err := c.hello(ctx, name, *m.ID); err != nil {
				return err
			}
		case c.st == nil:
			return fmt.Errorf("the harness sent %s before the handshake", m.Op)
		default:
			c.wg.Add(1)
			go func() {
				defer c.wg.Done()
				c.serve(ctx, &m)
			}()
		}
		if err != nil {
			return nil // the last line had no newline: the input ended
		}
	}
}

func (c *conn) hello(ctx context.Context, name string, id uint64) error {
	st, err := c.f.Open(ctx)
	if err != nil {
		c.answer(id, nil, err)
		return err
	}
	c.st = st
	c.answer(id, wire.Hello{Version: wire.Version, Store: name, Timing: wire.TimingOf(st.FenceTiming())}, nil)
	return nil
}

// serve runs one request and answers it.
func (c *conn) serve(ctx context.Context, m *wire.Message) {
	id := *m.ID
	ctx = context.WithValue(ctx, reqKey{}, reqInfo{c: c, id: id, sites: m.Sites == nil || *m.Sites})
	res, err := c.run(ctx, m)
	c.answer(id, res, err)
}

func (c *conn) run(ctx context.Context, m *wire.Message) (any, error) {
	st := c.st
	switch m.Op {
	case wire.OpAcquire:
		mode := hoststore.Exclusive
		if m.Mode == "takeover" {
			mode = hoststore.Takeover
		}
		g, err := st.AcquireFence(ctx, mode)
		if err != nil {
			return nil, err
		}
		return map[string]any{"token": uint64(g.Token), "superseded_lease_ns": int64(g.SupersededLease)}, nil
	case wire.OpRenew:
		if m.Token == nil {
			return nil, &hoststore.InvalidError{Detail: "renew_fence without token"}
		}
		return wire.Empty{}, st.RenewFence(ctx, hoststore.FenceToken(*m.Token))
	case wire.OpLoadHead:
		ref, err := scopeOf(m)
		if err != nil {
			return nil, err
		}
		h, err := st.LoadHead(ctx, ref)
		if err != nil || h == nil {
			return wire.HeadResult{}, err
		}
		wh := wire.HeadOf("", *h)
		return wire.HeadResult{Head: &wh}, nil
	case wire.OpList:
		kind, err := hoststore.ParseScopeKind(m.Kind)
		if err != nil || m.Limit == nil {
			return nil, &hoststore.InvalidError{Detail: fmt.Sprintf("list_heads: kind %q, limit %v", m.Kind, m.Limit)}
		}
		var after *hoststore.ScopeName
		if m.After != nil {
			after = hoststore.Ptr(hoststore.ScopeName(*m.After))
		}
		p, err := st.ListHeads(ctx, kind, after, *m.Limit)
		if err != nil {
			return nil, err
		}
		heads := make([]wire.Head, len(p.Heads))
		for i, h := range p.Heads {
			heads[i] = wire.HeadOf(string(h.Name), h.Head)
		}
		out := wire.Page{Heads: &heads}
		if p.Next != nil {
			out.Next = hoststore.Ptr(string(*p.Next))
		}
		return out, nil
	case wire.OpReadRows:
		ref, err := scopeOf(m)
		if err != nil {
			return nil, err
		}
		if m.From == nil || m.Limit == nil {
			return nil, &hoststore.InvalidError{Detail: "read_rows without from or limit"}
		}
		rows, err := st.ReadRows(ctx, ref, hoststore.RowIndex(*m.From), *m.Limit)
		if err != nil {
			return nil, err
		}
		out := make([]map[string]any, len(rows))
		for i, r := range rows {
			d := r.Data
			if d == nil {
				d = []byte{}
			}
			out[i] = map[string]any{"index": uint64(r.Index), "data": d}
		}
		return map[string]any{"rows": out}, nil
	case wire.OpCommit:
		if m.Batch == nil {
			return nil, &hoststore.InvalidError{Detail: "commit without batch"}
		}
		b, err := m.Batch.CommitBatch()
		if err != nil {
			return nil, &hoststore.InvalidError{Detail: err.Error()}
		}
		return wire.Empty{}, st.Commit(ctx, b)
	case wire.OpLapse:
		return wire.Empty{}, c.f.LapseFenceLeases(ctx)
	}
	return nil, &hoststore.InvalidError{Detail: fmt.Sprintf("unknown op %q", m.Op)}
}

func scopeOf(m *wire.Message) (hoststore.ScopeRef, error) {
	if m.Scope == nil {
		return hoststore.ScopeRef{}, &hoststore.InvalidError{Detail: m.Op + " without scope"}
	}
	ref, err := m.Scope.ScopeRef()
	if err != nil {
		return ref, &hoststore.InvalidError{Detail: err.Error()}
	}
	return ref, nil
}

// answer writes the answer to request id: res, or err on the wire. An
// error outside the contract (a context error once the input ended) is
// sent as unavailable.
func (c *conn) answer(id uint64, res any, err error) {
	m := map[string]any{"id": id}
	if err != nil {
		we := wire.ErrorOf(err)
		if we == nil {
			we = &wire.Error{Kind: "unavailable", Detail: err.Error()}
		}
		m["error"] = we
	} else {
		m["ok"] = res
	}
	c.write(m)
}

func (c *conn) write(m any) {
	b, err := json.Marshal(m)
	if err != nil {
		panic(fmt.Sprintf("serve: encoding a message: %v", err)) // the messages are this package's own
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, _ = c.w.Write(append(b, '\n'))
	_ = c.w.Flush()
}

// forward is internal/hook's handler while Serve runs: an at call to the
// harness for the request in ctx, which waits for the harness's answer.
func forward(ctx context.Context, site string, id hoststore.CommitID) error {
	ri, ok := ctx.Value(reqKey{}).(reqInfo)
	if !ok || !ri.sites {
		return nil // not a commit Serve runs, or one the harness arms nothing for
	}
	c := ri.c
	ch := make(chan *wire.Message, 1)
	c.mu.Lock()
	call := c.nextCall
	c.nextCall++
	c.calls[call] = ch
	c.mu.Unlock()
	c.write(map[string]any{"call": call, "op": wire.OpAt, "req": ri.id, "site": site, "commit_id": string(id)})
	select {
	case m := <-ch:
		if m.Error != nil {
			return fmt.Errorf("%w: the harness stopped the commit at %s: %s", context.Canceled, site, m.Error.Detail)
		}
		return nil
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.calls, call)
		c.mu.Unlock()
		return ctx.Err()
	}
}
