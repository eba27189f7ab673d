package audit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/audit"
	"github.com/memtool/memtool/internal/backendtest"
	"github.com/memtool/memtool/internal/battery"
	"github.com/memtool/memtool/internal/syncbuf"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/secrets"
	"github.com/memtool/memtool/storetest"
)

// TestWrapper runs the wrapper suite, logging every operation, Stat too.
func TestWrapper(t *testing.T) {
	opts := &audit.Options{Tenant: "t1", Stat: true}
	backendtest.RunWrapper(t, func(t *testing.T, inner memtool.Store) memtool.Store {
		return audit.New(inner, &syncbuf.Buffer{}, opts)
	}, nil)
}

func entries(t *testing.T, log string) []audit.Entry {
	t.Helper()
	var out []audit.Entry
	if err := audit.Read(strings.NewReader(log), audit.Filter{}, func(e audit.Entry) error {
		out = append(out, e)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestEntries runs a few commands and checks every entry they log, except
// time and duration.
func TestEntries(t *testing.T) {
	backendtest.OnLocal(t, func(t *testing.T, inner memtool.Store) {
		var log syncbuf.Buffer
		before := time.Now().UTC()
		mem := memtool.New(audit.New(inner, &log, &audit.Options{Tenant: "alice"}), nil)
		steps := []map[string]any{
			{"command": "create", "path": "/memories/d/a.md", "file_text": "CONTENT-ONE"},
			{"command": "view", "path": "/memories/d/a.md"},
			{"command": "str_replace", "path": "/memories/d/a.md", "old_str": "NOT-THERE-XYZ", "new_str": "y"},
			{"command": "str_replace", "path": "/memories/d/a.md", "old_str": "ONE", "new_str": "TWO-LONGER"},
			{"command": "rename", "old_path": "/memories/d", "new_path": "/memories/e"},
			{"command": "create", "path": "/memories/e/a.md", "file_text": "x"},
			{"command": "delete", "path": "/memories/e"},
		}
		for _, s := range steps {
			storetest.Call(t, mem, s)
		}
		got := entries(t, log.String())
		want := []audit.Entry{
			{Op: "mkdir", Path: "/memories/d", Outcome: "ok"},
			{Op: "create", Path: "/memories/d/a.md", Outcome: "ok", Bytes: 11},
			{Op: "read", Path: "/memories/d/a.md", Outcome: "ok", Bytes: 11},
			{Op: "update", Path: "/memories/d/a.md", Outcome: "edit_failed"},
			{Op: "update", Path: "/memories/d/a.md", Outcome: "ok", Bytes: 18},
			{Op: "rename", Path: "/memories/d", NewPath: "/memories/e", Outcome: "ok"},
			// No mkdir: the directory is there, and MkdirAll asks before it makes.
			{Op: "create", Path: "/memories/e/a.md", Outcome: "exist", Bytes: 1},
			{Op: "remove_all", Path: "/memories/e", Outcome: "ok"},
		}
		for i := range got {
			if got[i].Time.Before(before.Add(-time.Second)) || got[i].Micros < 0 || got[i].Tenant != "alice" {
				t.Errorf("entry %d: time %v, duration %d, tenant %q", i, got[i].Time, got[i].Micros, got[i].Tenant)
			}
			got[i].Time, got[i].Micros, got[i].Tenant = time.Time{}, 0, ""
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("got\n%+v\nwant\n%+v", got, want)
		}
		for _, secret := range []string{"CONTENT", "NOT-THERE", "LONGER"} {
			if strings.Contains(log.String(), secret) {
				t.Errorf("the log holds file contents %q:\n%s", secret, log.String())
			}
		}
	})
}

// TestRefusedByAnotherWrapper: an audit log outside the secrets wrapper
// records its refusal as "refused", without the refusal's text.
func TestRefusedByAnotherWrapper(t *testing.T) {
	var log syncbuf.Buffer
	mem := memtool.New(audit.New(secrets.New(memstore.New(), nil), &log, nil), nil)
	r := storetest.Call(t, mem, map[string]any{"command": "create", "path": "/memories/a.md", "file_text": "key AKIA" + "IOSFODNN7EXAMPLE"})
	if !r.IsError {
		t.Fatal("secret accepted")
	}
	got := entries(t, log.String())
	if len(got) != 1 || got[0].Op != "create" || got[0].Outcome != "refused" {
		t.Errorf("got %+v", got)
	}
	if strings.Contains(log.String(), "AKIA") {
		t.Errorf("the log holds the secret: %s", log.String())
	}
}

// TestSecretInPath: a path that holds a secret reaches the log with the
// secret cut out, as the secrets policy's refusal shows it to the model:
// whether the policy refused the operation (a create, a rename onto it),
// or nothing refused it (a view, which the policy does not scan).
func TestSecretInPath(t *testing.T) {
	const key = "AKIA" + "IOSFODNN7EXAMPLE"
	const token = "ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789"
	backendtest.OnLocal(t, func(t *testing.T, inner memtool.Store) {
		var log syncbuf.Buffer
		mem := memtool.New(audit.New(secrets.New(inner, nil), &log, nil), nil)
		for _, in := range []map[string]any{
			{"command": "create", "path": "/memories/" + key + ".md", "file_text": "x"},
			{"command": "create", "path": "/memories/a.md", "file_text": "x"},
			{"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/d/" + token},
			{"command": "view", "path": "/memories/notes/" + token + "/b.md"},
		} {
			storetest.Call(t, mem, in)
		}
		for _, secret := range []string{key, token} {
			if strings.Contains(log.String(), secret) {
				t.Errorf("the log holds the secret %s:\n%s", secret, log.String())
			}
		}
		var shown []string
		for _, e := range entries(t, log.String()) {
			if e.Op == "create" || e.Op == "rename" || e.Op == "read" {
				shown = append(shown, e.Op+" "+e.Path+" "+e.NewPath)
			}
		}
		want := []string{
			"create /memories/[REDACTED AWS access key ID].md ",
			"create /memories/a.md ",
			"rename /memories/a.md /memories/d/[REDACTED GitHub token]",
			"read /memories/notes/[REDACTED GitHub token]/b.md ",
		}
		if !reflect.DeepEqual(shown, want) {
			t.Errorf("entries\n%q\nwant\n%q", shown, want)
		}
	})
}

func TestOutcome(t *testing.T) {
	for err, want := range map[error]string{
		nil:                      "ok",
		memtool.ErrNotExist:      "not_exist",
		memtool.ErrExist:         "exist",
		memtool.ErrNotDir:        "not_dir",
		memtool.ErrIsDir:         "is_dir",
		memtool.ErrIrregular:     "irregular",
		memtool.ErrEscapes:       "escapes",
		memtool.ErrTooLarge:      "too_large",
		memtool.ErrNotEmpty:      "not_empty",
		context.Canceled:         "cancelled",
		errors.New("boom"):       "error",
		&memtool.PathError{}:     "refused",
		memtool.Refusal("no"):    "refused",
		context.DeadlineExceeded: "cancelled",
	} {
		if got := audit.Outcome(err); got != want {
			t.Errorf("Outcome(%v) = %q, want %q", err, got, want)
		}
	}
}

// TestWriteError: a failing log writer does not fail the operation, and
// the error reaches OnError.
func TestWriteError(t *testing.T) {
	var got []error
	s := audit.New(memstore.New(), failingWriter{}, &audit.Options{OnError: func(err error) { got = append(got, err) }})
	if err := s.Mkdir(context.Background(), "d"); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !errors.Is(got[0], errDiskFull) {
		t.Errorf("OnError got %v", got)
	}
}

var errDiskFull = errors.New("disk full")

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errDiskFull }

func TestFilter(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 4, 0, 0, 0, time.UTC)
	log := []audit.Entry{
		{Time: t0, Tenant: "a", Op: "create", Path: "/memories/x/1.md", Outcome: "ok"},
		{Time: t0.Add(time.Minute), Tenant: "b", Op: "read", Path: "/memories/xy", Outcome: "not_exist"},
		{Time: t0.Add(2 * time.Minute), Tenant: "a", Op: "rename", Path: "/memories/y", NewPath: "/memories/x/y", Outcome: "ok"},
		{Time: t0.Add(3 * time.Minute), Tenant: "a", Op: "rename", Path: "/memories/x", NewPath: "/memories/z", Outcome: "ok"},
		{Time: t0.Add(4 * time.Minute), Tenant: "a", Op: "remove_all", Path: "/memories/z", Outcome: "ok"},
		{Time: t0.Add(5 * time.Minute), Tenant: "a", Op: "mkdir", Path: "/memories/z", Outcome: "ok"},
	}
	var buf bytes.Buffer
	for _, e := range log {
		b, _ := json.Marshal(e)
		buf.Write(append(b, '\n', '\n'))
	}
	for _, c := range []struct {
		f    audit.Filter
		want []int
	}{
		{audit.Filter{}, []int{0, 1, 2, 3, 4, 5}},
		{audit.Filter{Tenant: "a"}, []int{0, 2, 3, 4, 5}},
		{audit.Filter{Op: "read"}, []int{1}},
		{audit.Filter{Outcome: "ok"}, []int{0, 2, 3, 4, 5}},
		{audit.Filter{Path: "/memories/x"}, []int{0, 2, 3}},
		{audit.Filter{Path: "/memories/xy"}, []int{1}},
		// A file's own entries, and the renames and removals of a
		// directory above it, which took it along.
		{audit.Filter{Path: "/memories/x/1.md"}, []int{0, 3}},
		{audit.Filter{Path: "/memories/z/1.md"}, []int{3, 4}},
		{audit.Filter{Since: t0.Add(time.Minute)}, []int{1, 2, 3, 4, 5}},
		{audit.Filter{Until: t0.Add(time.Minute)}, []int{0}},
	} {
		var got []int
		audit.Read(bytes.NewReader(buf.Bytes()), c.f, func(e audit.Entry) error {
			for i := range log {
				if log[i].Time.Equal(e.Time) {
					got = append(got, i)
				}
			}
			return nil
		})
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%+v: got %v, want %v", c.f, got, c.want)
		}
	}
	err := audit.Read(strings.NewReader("\n{\"op\":\"read\",\"path\":\"/memories\",\"outcome\":\"ok\"}\nnot json\n"), audit.Filter{}, func(audit.Entry) error { return nil })
	var re *audit.ReadError
	if !errors.As(err, &re) || re.Line != 3 {
		t.Errorf("a bad line: got %v, want an error for line 3", err)
	}
}

// TestBattery: the same answers with and without the wrapper, every line
// of the log an entry, and no file text in it.
func TestBattery(t *testing.T) {
	inputs, texts := batteryInputs(t)
	var log syncbuf.Buffer
	battery.SameAnswers(t, inputs, audit.New(memstore.New(), &log, &audit.Options{Stat: true}))
	got := entries(t, log.String())
	if len(got) < len(inputs) {
		t.Errorf("%d entries for %d commands", len(got), len(inputs))
	}
	var paths strings.Builder
	for _, e := range got {
		paths.WriteString(e.Path + "\n" + e.NewPath + "\n")
	}
	for _, text := range texts {
		if len(text) >= 12 && !strings.Contains(paths.String(), text) && strings.Contains(log.String(), text) {
			t.Errorf("the log holds file text %q", text)
		}
	}
}

// batteryInputs returns the battery's tool inputs and the texts they write.
func batteryInputs(t *testing.T) ([][]byte, []string) {
	t.Helper()
	inputs := battery.Inputs(t)
	var texts []string
	for _, in := range inputs {
		var c map[string]json.RawMessage
		if err := json.Unmarshal(in, &c); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"file_text", "new_str", "insert_text", "old_str"} {
			var s string
			if v, ok := c[k]; ok && json.Unmarshal(v, &s) == nil {
				texts = append(texts, s)
			}
		}
	}
	return inputs, texts
}

// BenchmarkEdit: a str_replace in a 4 KiB file through Memory on memstore,
// without and with the wrapper (logging to io.Discard).
func BenchmarkEdit(b *testing.B) {
	storetest.BenchmarkEdit(b, func() memtool.Store { return memstore.New() }, []byte(strings.Repeat("abcdefghijklmno\n", 256)), "audit",
		func(_ *testing.B, s memtool.Store) memtool.Store { return audit.New(s, io.Discard, nil) })
}
