package memtool_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/memtool/memtool"
)

func TestValidateTenant(t *testing.T) {
	valid := []string{"a", "0", "t1", "user-42", "org.team_7", strings.Repeat("x", 64), "a..b", "a-"}
	invalid := []string{"", ".", "..", "../t1", "t1/x", "/t1", "T1", "Ünï", "-a", ".a", "_a", "t 1", "t1\x00", "a\\b", "a:b", "a%2e", strings.Repeat("x", 65)}
	for _, id := range valid {
		if err := memtool.ValidateTenant(id); err != nil {
			t.Errorf("ValidateTenant(%q) = %v, want nil", id, err)
		}
	}
	for _, id := range invalid {
		if err := memtool.ValidateTenant(id); err == nil {
			t.Errorf("ValidateTenant(%q) = nil, want an error", id)
		}
	}
}

// TestHostileTenantIDs runs the tenant lines of the hostile corpus that
// attack the id itself: each is refused, unless the attack is in the path
// (which the path gate refuses) or the line asks only that the id stay
// contained (a case variant, which is refused here too).
func TestHostileTenantIDs(t *testing.T) {
	f, err := os.Open("testdata/hostile-paths.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	n := 0
	for sc.Scan() {
		var l struct {
			ID, Expect, Layer, Note string
			Tenant                  *string
			Cmd                     struct{ Path string }
		}
		if json.Unmarshal(sc.Bytes(), &l) != nil || l.Layer != "tenant" || l.Tenant == nil {
			continue
		}
		n++
		err := memtool.ValidateTenant(*l.Tenant)
		_, _, pathErr := memtool.CleanPath(l.Cmd.Path)
		if err == nil && pathErr == nil {
			t.Errorf("%s (%s): tenant %q and path %q both accepted", l.ID, l.Note, *l.Tenant, l.Cmd.Path)
		}
	}
	if n < 5 {
		t.Fatalf("%d tenant lines in the corpus", n)
	}
}

func TestTenancyError(t *testing.T) {
	for _, multi := range []bool{true, false} {
		if err := memtool.TenancyError(multi); !errors.Is(err, memtool.ErrTenancy) {
			t.Errorf("TenancyError(%v) = %v, not ErrTenancy", multi, err)
		}
	}
}

// FuzzValidateTenant checks that ValidateTenant accepts exactly the ids
// its documentation allows: one plain, lower-case name, usable as a
// directory name or a key, never a path.
func FuzzValidateTenant(f *testing.F) {
	for _, s := range []string{"t1", "..", "a/b", "A", "a.b", strings.Repeat("z", 64), "a-", "_a", "a\u00e9"} {
		f.Add(s)
	}
	grammar := regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)
	f.Fuzz(func(t *testing.T, id string) {
		err := memtool.ValidateTenant(id)
		if (err == nil) != grammar.MatchString(id) {
			t.Fatalf("ValidateTenant(%q) = %v, but the documented grammar says %v", id, err, grammar.MatchString(id))
		}
		if err != nil {
			return
		}
		if id == "" || len(id) > memtool.MaxTenantLen || id == "." || id == ".." ||
			strings.ContainsAny(id, "/\\:\x00 ") || strings.ToLower(id) != id || strings.HasPrefix(id, ".") {
			t.Errorf("ValidateTenant accepted %q", id)
		}
	})
}
