package chapter

import (
	"context"
	"errors"
	"runtime"
	"testing"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/settings"
	"github.com/conform-spi/conform/reference"
)

// lateStore answers LoadHead, ListHeads and ReadRows only once the
// caller's context ended, and then with values: a store that overruns
// its per-call bound and answers after the harness gave up on the call.
type lateStore struct {
	hoststore.HostStore
	answered chan struct{}
}

func (s *lateStore) late(ctx context.Context) {
	<-ctx.Done()
	s.answered <- struct{}{}
}

func (s *lateStore) LoadHead(ctx context.Context, _ hoststore.ScopeRef) (*hoststore.VersionedHead, error) {
	s.late(ctx)
	return &hoststore.VersionedHead{Version: 1, CommitID: "late", Head: []byte("late")}, nil
}

func (s *lateStore) ListHeads(ctx context.Context, _ hoststore.ScopeKind, _ *hoststore.ScopeName, _ int) (hoststore.HeadPage, error) {
	s.late(ctx)
	return hoststore.HeadPage{Heads: []hoststore.NamedHead{{Name: "late", Head: hoststore.VersionedHead{Version: 1, CommitID: "late"}}}}, nil
}

func (s *lateStore) ReadRows(ctx context.Context, _ hoststore.ScopeRef, _ hoststore.RowIndex, _ int) ([]hoststore.Row, error) {
	s.late(ctx)
	return []hoststore.Row{{Index: 0, Data: []byte("late")}}, nil
}

type lateFactory struct {
	hoststore.HostStoreFactory
	answered chan struct{}
}

func (f lateFactory) Open(ctx context.Context) (hoststore.HostStore, error) {
	s, err := f.HostStoreFactory.Open(ctx)
	if err != nil {
		return nil, err
	}
	return &lateStore{HostStore: s, answered: f.answered}, nil
}

// TestLateAnswersAfterAHangAreDropped checks that a call judged a hang
// returns nothing of the answer the store gives later: the late answer
// must not reach the caller's variables, which the caller reads at once
// (under -race, a shared variable is a data race).
func TestLateAnswersAfterAHangAreDropped(t *testing.T) {
	answered := make(chan struct{}, 3)
	e, err := newEnv(t.Context(), Config{
		NewRealm: func(context.Context) (hoststore.HostStoreFactory, error) {
			return lateFactory{HostStoreFactory: reference.NewFactory(), answered: answered}, nil
		},
		Settings: settings.Settings{Options: settings.Options{CallTimeout: MinCallTimeout}},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := hoststore.ScopeRef{Kind: hoststore.KindRecord, Name: "a"}
	calls := []struct {
		op   string
		call func(p *Proc) (any, error)
	}{
		{"LoadHead", func(p *Proc) (any, error) { return p.Load(t.Context(), s) }},
		{"ListHeads", func(p *Proc) (any, error) { return p.List(t.Context(), hoststore.KindRecord, nil, 10) }},
		{"ReadRows", func(p *Proc) (any, error) { return p.Read(t.Context(), s, 0, 10) }},
	}
	for _, c := range calls {
		p, err := e.Open(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		v, err := c.call(p)
		var br *Breach
		if !errors.As(err, &br) || br.Kind != BreachHang {
			t.Errorf("%s answered after its bound: %v, want a hang", c.op, err)
		}
		switch v := v.(type) {
		case *hoststore.VersionedHead:
			if v != nil {
				t.Errorf("%s judged a hang returned the late head %+v", c.op, *v)
			}
		case hoststore.HeadPage:
			if len(v.Heads) > 0 {
				t.Errorf("%s judged a hang returned the late page %+v", c.op, v)
			}
		case []hoststore.Row:
			if len(v) > 0 {
				t.Errorf("%s judged a hang returned the late rows %+v", c.op, v)
			}
		}
		<-answered
		// Let the store's late answer land while the test still runs,
		// so that -race sees it beside the caller's reads.
		for range 100 {
			runtime.Gosched()
		}
	}
}
