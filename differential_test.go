package memtool_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
)

// TestDifferentialBattery replays testdata/differential/cases.jsonl, the
// cases found by running random command sequences through the TS SDK
// 1.14.0 handler (the reference oracle) and through memtool, as
// TestReferenceBattery replays the reference battery: every answer must be
// the TS handler's recorded one (ts-expected.jsonl, from the oracle, with
// LC_ALL=C on ext4), except on the lines of deviations.jsonl, which carry
// memtool's answer and the deviation that explains it.
func TestDifferentialBattery(t *testing.T) {
	dir := filepath.Join("testdata", "differential")
	cases := readJSONL[map[string]json.RawMessage](t, filepath.Join(dir, "cases.jsonl"))
	expected := readJSONL[battLine](t, filepath.Join(dir, "ts-expected.jsonl"))
	if len(cases) != len(expected) {
		t.Fatalf("%d cases but %d expected answers", len(cases), len(expected))
	}
	deviations := map[int]battLine{}
	for _, d := range readJSONL[battLine](t, filepath.Join(dir, "deviations.jsonl")) {
		if !validDeviation(d.Deviation) || d.Why == "" {
			t.Errorf("deviations.jsonl line i=%d: deviation %q is not a list of D1–D16 or has no why", d.I, d.Deviation)
		}
		deviations[d.I] = d
	}
	base := t.TempDir()
	store, err := filestore.Open(filepath.Join(base, "memories"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	mem := memtool.New(store, nil)
	for i, c := range cases {
		want := expected[i]
		var got battLine
		if raw, ok := c["setup"]; ok {
			got = runSetup(t, base, i, raw, c)
		} else {
			res := mem.Run(context.Background(), toolInput(c))
			content, _ := json.Marshal(res.Content())
			got = battLine{I: i, OK: !res.IsError, Content: content}
		}
		if dev, ok := deviations[i]; ok {
			if sameAnswer(got, want) {
				t.Errorf("line %d %s: listed as deviation %s but memtool now answers as the TS SDK does; drop the entry", i, c["_c"], dev.Deviation)
			}
			want = dev
		}
		if !sameAnswer(got, want) {
			t.Errorf("line %d %s:\n got: %s\nwant: %s", i, c["_c"], show(got), show(want))
		}
	}
}
