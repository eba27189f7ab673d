package remotestore_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/remotetest"
	"github.com/memtool/memtool/limits"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/remotestore"
	"github.com/memtool/memtool/server/resource"
)

// run is one tool call through Memory.
func run(t *testing.T, s memtool.Store, input string) memtool.Result {
	t.Helper()
	return memtool.New(s, nil).Run(t.Context(), []byte(input))
}

// TestSameAnswersWithPolicy: a policy's refusal behind the server reaches
// the model as the same text as over the policy locally, and a quota's
// refusal changes nothing.
func TestSameAnswersWithPolicy(t *testing.T) {
	opts := &limits.Options{MaxFileSize: 10, MaxFiles: 2}
	local, remote := limits.New(memstore.New(), opts), serve(t, limits.New(memstore.New(), opts))
	for _, in := range []string{
		`{"command":"create","path":"/memories/a.md","file_text":"short"}`,
		`{"command":"create","path":"/memories/big.md","file_text":"far more than ten bytes"}`,
		`{"command":"create","path":"/memories/b.md","file_text":"two"}`,
		`{"command":"create","path":"/memories/c.md","file_text":"three"}`,
		`{"command":"str_replace","path":"/memories/a.md","old_str":"short","new_str":"much longer than ten"}`,
		`{"command":"view","path":"/memories"}`,
	} {
		want, got := run(t, local, in), run(t, remote, in)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", in, got, want)
		}
	}
}

// TestReadOnlyKey: a key that may only read gets ErrReadOnly for a change,
// which Memory names to the model, and reads work.
func TestReadOnlyKey(t *testing.T) {
	inner := memstore.New()
	inner.WriteFile(t.Context(), "f.md", []byte("kept\n"), memtool.CreateOnly)
	srv := httptest.NewServer(resource.New(func(*http.Request) (memtool.Store, bool, error) { return inner, false, nil }, nil))
	defer srv.Close()
	s, err := remotestore.Open(srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.WriteFile(t.Context(), "g.md", nil, memtool.CreateOnly); !errors.Is(err, memtool.ErrReadOnly) {
		t.Errorf("WriteFile = %v, want ErrReadOnly", err)
	}
	res := run(t, s, `{"command":"create","path":"/memories/g.md","file_text":"x"}`)
	if !res.IsError || !strings.Contains(res.Text, "read-only") {
		t.Errorf("create with a read-only key: %+v", res)
	}
	if data, err := s.ReadFile(t.Context(), "f.md", 100); err != nil || string(data) != "kept\n" {
		t.Errorf("ReadFile = %q, %v", data, err)
	}
}

// TestBadToken: a wrong token is the server's 401, and no error shows the
// token.
func TestBadToken(t *testing.T) {
	url := remotetest.Server(t, memstore.New(), token)
	const wrong = "wrong-secret-token-42"
	s, err := remotestore.Open(url, &remotestore.Options{Token: wrong})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Stat(t.Context(), "")
	var re *resource.Error
	if !errors.As(err, &re) || re.Status != http.StatusUnauthorized {
		t.Fatalf("Stat with a wrong token = %v, want the server's 401", err)
	}
	if strings.Contains(fmt.Sprintf("%v %+v %#v", err, err, err), wrong) {
		t.Fatalf("the error shows the token: %v", err)
	}
	// It names the root as the model does, not as an empty name.
	if !strings.HasPrefix(err.Error(), "remote stat /memories: ") {
		t.Errorf("Stat of the root = %q, want it to start %q", err, "remote stat /memories: ")
	}
}

// TestOpenRefuses: URLs that would leak the token, or are not a server's.
func TestOpenRefuses(t *testing.T) {
	for _, u := range []string{
		"http://memory.example.com",              // a token in the clear over a network
		"https://user:secret@memory.example.com", // a secret in the URL
		"https://memory.example.com?token=secret@",
		"ftp://memory.example.com",
		"https://",
	} {
		if _, err := remotestore.Open(u, nil); err == nil {
			t.Errorf("Open(%q) succeeded", u)
		} else if strings.Contains(err.Error(), "secret@") {
			t.Errorf("Open(%q): the error shows the password: %v", u, err)
		}
	}
	for _, u := range []string{"http://127.0.0.1:8080", "http://localhost:8080/prefix", "http://[::1]:1", "https://memory.example.com/base/"} {
		if _, err := remotestore.Open(u, nil); err != nil {
			t.Errorf("Open(%q): %v", u, err)
		}
	}
}

// TestTimeout: a server that does not answer within Options.Timeout makes
// the call fail with context.DeadlineExceeded.
func TestTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	s, err := remotestore.Open(srv.URL, &remotestore.Options{Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Stat(t.Context(), "f"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Stat = %v, want DeadlineExceeded", err)
	}
}

// TestUpdateAcrossClients: clients of one server (and a writer on the
// store itself) append to one file at once; no append is lost.
func TestUpdateAcrossClients(t *testing.T) {
	inner := memstore.New()
	inner.WriteFile(t.Context(), "log", nil, memtool.CreateOnly)
	a, b := serve(t, inner), serve(t, inner)
	const each = 20
	var wg sync.WaitGroup
	for i, s := range []memtool.Store{a, b, inner, a, b} {
		wg.Go(func() {
			for j := range each {
				line := fmt.Sprintf("%d-%d\n", i, j)
				if err := s.Update(t.Context(), "log", 1<<20, func(old []byte) ([]byte, error) { return append(old, line...), nil }); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	data, _ := inner.ReadFile(t.Context(), "log", 1<<20)
	if n := strings.Count(string(data), "\n"); n != 5*each {
		t.Fatalf("%d lines, want %d: an update was lost", n, 5*each)
	}
}

// TestReservedNames: the names the storage layer keeps for itself are
// out of the API's reach: reading one finds nothing, writing one is
// refused with the path gate's reason, and the server's own entries stay.
func TestReservedNames(t *testing.T) {
	inner := memstore.New()
	s := serve(t, inner)
	if _, err := s.ReadFile(t.Context(), ".memtool-policy.json", 100); !errors.Is(err, memtool.ErrNotExist) {
		t.Errorf("ReadFile(.memtool-policy.json) = %v, want ErrNotExist", err)
	}
	if _, err := s.Stat(t.Context(), "d/.memtool-history"); !errors.Is(err, memtool.ErrNotExist) {
		t.Errorf("Stat = %v, want ErrNotExist", err)
	}
	var pe *memtool.PathError
	if err := s.WriteFile(t.Context(), ".memtool-policy.json", []byte("{}"), memtool.Replace); !errors.As(err, &pe) {
		t.Errorf("WriteFile(.memtool-policy.json) = %v, want the gate's refusal", err)
	}
	inner.WriteFile(t.Context(), "f", nil, memtool.CreateOnly)
	if r, ok := memtool.Store(s).(memtool.Renamer); !ok || !errors.As(r.Rename(t.Context(), "f", ".memtool-x"), &pe) {
		t.Errorf("Rename onto a reserved name was not refused")
	}
	if entries, _ := inner.ReadDir(t.Context(), ""); len(entries) != 1 {
		t.Errorf("the store holds %v", entries)
	}
}

// churning is a store whose file changes after every read: a client's
// If-Match write never lands.
type churning struct{ *memstore.Store }

func (c churning) ReadFile(ctx context.Context, name string, limit int64) ([]byte, error) {
	data, err := c.Store.ReadFile(ctx, name, limit)
	c.Store.WriteFile(ctx, name, append(data, 'x'), memtool.Replace)
	return data, err
}

// TestUpdateGivesUp: Update tries MaxUpdateTries times on a file that
// keeps changing, then fails with ErrBusy, having written nothing.
func TestUpdateGivesUp(t *testing.T) {
	inner := churning{memstore.New()}
	inner.WriteFile(t.Context(), "f", []byte("0"), memtool.CreateOnly)
	srv := httptest.NewServer(remotetest.Handler(inner, ""))
	defer srv.Close()
	s, err := remotestore.Open(srv.URL, &remotestore.Options{MaxUpdateTries: 3})
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	err = s.Update(t.Context(), "f", 100, func(old []byte) ([]byte, error) { calls++; return []byte("mine"), nil })
	if !errors.Is(err, memtool.ErrBusy) || calls != 3 {
		t.Fatalf("Update = %v after %d calls of fn, want ErrBusy after 3", err, calls)
	}
	if data, _ := inner.Store.ReadFile(t.Context(), "f", 100); strings.Contains(string(data), "mine") {
		t.Fatalf("the file holds %q", data)
	}
}
