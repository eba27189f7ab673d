package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/memtool/memtool"
)

// A limit above the engine's own cap would never be reached: memtool
// refuses such a file or path first. The policy refuses it, naming the
// field and the cap, rather than accept a setting that does nothing.
func TestPolicyLimitsWithinEngineCaps(t *testing.T) {
	caps := map[string]int64{
		"max_file_size":   memtool.DefaultMaxFileSize,
		"max_path_length": memtool.MaxPathBytes,
		"max_depth":       memtool.MaxDepth,
	}
	// The tags are the caps: a change of a cap shows here.
	lt, _ := reflect.TypeOf(policyFile{}).FieldByName("Limits")
	for i := range lt.Type.Elem().NumField() {
		f := lt.Type.Elem().Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if want, ok := caps[name]; ok && f.Tag.Get("max") != strconv.FormatInt(want, 10) {
			t.Errorf("limits.%s: max tag %q, want the engine's cap %d", name, f.Tag.Get("max"), want)
		}
	}
	parsePolicy := func(text string) (*policyFile, error) {
		file := filepath.Join(t.TempDir(), "p.json")
		if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return loadPolicy(file)
	}
	for name, limit := range caps {
		at := `{"limits":{"` + name + `":` + strconv.FormatInt(limit, 10) + `}}`
		if _, err := parsePolicy(at); err != nil {
			t.Errorf("%s: %v, want it accepted", at, err)
		}
		over := `{"limits":{"` + name + `":` + strconv.FormatInt(limit+1, 10) + `}}`
		_, err := parsePolicy(over)
		if err == nil || !strings.Contains(err.Error(), "limits."+name) || !strings.Contains(err.Error(), strconv.FormatInt(limit, 10)) {
			t.Errorf("%s: %v, want an error naming limits.%s and %d", over, err, name, limit)
		}
	}
}
