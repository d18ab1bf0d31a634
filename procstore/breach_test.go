package procstore_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/procstore"
)

const okHello = `{"id":0,"ok":{"version":1}}`

// fakeStore returns a factory over a scripted store process (see fake).
func fakeStore(t *testing.T, script ...string) *procstore.Factory {
	t.Helper()
	f, err := procstore.New([]string{os.Args[0]}, procstore.WithEnv(envChild+"=fake", envFake+"="+strings.Join(script, "|")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestHandshakeBreaches: a handshake with another version or a timing out
// of bounds is a *ProtocolError; one answered with a contract error is
// that error.
func TestHandshakeBreaches(t *testing.T) {
	for _, c := range []struct {
		name, answer, want string
	}{
		{"version", `{"id":0,"ok":{"version":2}}`, "version 2"},
		{"timing", `{"id":0,"ok":{"version":1,"timing":{"renew_interval_ns":1000,"lease_ns":3000}}}`, "fence timing"},
		{"shape", `{"id":0,"ok":[1]}`, "wrong shape"},
		{"garbage", `ready`, "no message of the protocol"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := fakeStore(t, c.answer).Open(context.Background())
			var pe *procstore.ProtocolError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Open = %v, want a *ProtocolError saying %q", err, c.want)
			}
		})
	}
	_, err := fakeStore(t, `{"id":0,"error":{"kind":"unavailable","detail":"the disk is gone"}}`).Open(context.Background())
	if hoststore.KindOf(err) != hoststore.ErrKindUnavailable || !strings.Contains(err.Error(), "the disk is gone") {
		t.Errorf("Open = %v, want the store's Unavailable", err)
	}
}

// TestAnswerBreaches: answers of the wrong shape, with both ok and error,
// of an unknown error kind, or an at call for a request never sent, are
// *ProtocolErrors, for that call and every later one.
func TestAnswerBreaches(t *testing.T) {
	for _, c := range []struct {
		name, answer, want string
	}{
		{"result", `{"id":<id>,"ok":{"token":1}}`, "wrong shape"},
		{"both", `{"id":<id>,"ok":{},"error":{"kind":"invalid","detail":"x"}}`, "both of ok and error"},
		{"kind", `{"id":<id>,"error":{"kind":"weird"}}`, "unknown kind"},
		{"held", `{"id":<id>,"error":{"kind":"held","holder":1}}`, "remaining_ns"},
		{"at", `{"call":0,"op":"at","req":99,"site":"commit-locked","commit_id":"c"}`, "not sent"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			st, err := fakeStore(t, okHello, c.answer).Open(ctx)
			if err != nil {
				t.Fatal(err)
			}
			_, err = st.AcquireFence(ctx, hoststore.Exclusive)
			var pe *procstore.ProtocolError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("AcquireFence = %v, want a *ProtocolError saying %q", err, c.want)
			}
			if err := st.RenewFence(ctx, 1); !errors.As(err, &pe) {
				t.Errorf("a later call = %v, want the *ProtocolError again", err)
			}
		})
	}
}

// TestContractErrorsCross: each of the six errors comes back as its
// hoststore type with its fields.
func TestContractErrorsCross(t *testing.T) {
	ctx := context.Background()
	st, err := fakeStore(t, okHello,
		`{"id":<id>,"error":{"kind":"held","holder":7,"remaining_ns":1500}}`,
		`{"id":<id>,"error":{"kind":"fenced_out","current":9}}`,
		`{"id":<id>,"error":{"kind":"conflict","scope":{"kind":"Mob","name":"m"},"current":null}}`,
	).Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var held *hoststore.HeldError
	if _, err := st.AcquireFence(ctx, hoststore.Exclusive); !errors.As(err, &held) || held.Holder != 7 || held.Remaining != 1500 {
		t.Errorf("AcquireFence = %v, want Held by 7 with 1.5µs left", err)
	}
	var fo *hoststore.FencedOutError
	if err := st.RenewFence(ctx, 3); !errors.As(err, &fo) || fo.Current != 9 {
		t.Errorf("RenewFence = %v, want FencedOut by 9", err)
	}
	b, _ := hoststore.NewCommitBatch("c", 3, []hoststore.ScopeUpdate{{Scope: hoststore.ScopeRef{Kind: hoststore.KindMob, Name: "m"}, Previous: hoststore.Ptr(hoststore.ScopeVersion(1)), Next: 2}})
	var ce *hoststore.ConflictError
	if err := st.Commit(ctx, b); !errors.As(err, &ce) || ce.Current != nil || ce.Scope.Name != "m" {
		t.Errorf("Commit = %v, want Conflict over a scope that does not exist", err)
	}
}
