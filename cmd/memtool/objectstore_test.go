package main

import (
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// These tests run the object store (package objectstore) through the real
// memtool binary, as stores_test.go runs the databases: over gocloud's
// directory driver (file+blob://), and over a real S3 protocol
// conversation — the AWS SDK v2 client in each memtool process against an
// S3-compatible server (gofakes3) in the test process.

// s3URL starts an S3-compatible server with one bucket and returns the
// store URL of that bucket, under prefix. The children find the
// credentials in the environment, as they would for S3.
func s3URL(t *testing.T, prefix string) string {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket("memories"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	t.Cleanup(srv.Close)
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	return fmt.Sprintf("s3://memories?region=us-east-1&endpoint=%s&use_path_style=true&prefix=%s", srv.URL, prefix)
}

var objectBackends = []struct {
	name string
	url  func(t *testing.T) string
}{
	{"fileblob", func(t *testing.T) string { return "file+blob://" + filepath.Join(t.TempDir(), "bucket") }},
	{"s3", func(t *testing.T) string { return s3URL(t, "team/memory") }},
}

func TestReferenceBatteryOnObjectStores(t *testing.T) {
	want := runBattery(t, filepath.Join(t.TempDir(), "memories"))
	if len(want.answers) < 150 {
		t.Fatalf("the battery gave only %d answers", len(want.answers))
	}
	for _, be := range objectBackends {
		t.Run(be.name, func(t *testing.T) {
			got := runBattery(t, be.url(t))
			if len(got.answers) != len(want.answers) {
				t.Fatalf("%d answers, want %d", len(got.answers), len(want.answers))
			}
			for i := range want.answers {
				if got.answers[i] != want.answers[i] {
					t.Errorf("%s:\n got: %.600s\nwant: %.600s", want.labels[i], got.answers[i], want.answers[i])
				}
			}
		})
	}
}

// TestConcurrentEditsOnS3 runs the edit plan of
// TestConcurrentEditsAcrossProcesses with 4 memtool exec processes on one
// S3 bucket: nothing but S3's If-Match keeps them from losing updates.
func TestConcurrentEditsOnS3(t *testing.T) {
	plan := editPlan{writers: 4, ops: 40}
	if testing.Short() {
		plan.ops = 16
	}
	url := s3URL(t, "")
	concurrentEdits(t, plan, url, "u1")
}

// TestRacingOnS3 races 4 processes creating one file, and 4 renaming their
// own files onto one name, on one S3 bucket: exactly one wins each race
// (If-None-Match: *), and the bucket holds what the winner wrote.
func TestRacingOnS3(t *testing.T) {
	url := s3URL(t, "")
	store := openTestStore(t, url, "")
	for round := range raceRounds() {
		p := fmt.Sprintf("/memories/c%d/target.txt", round)
		lines := make([]string, racers)
		for i := range lines {
			lines[i] = jsonLine(createInput(p, fmt.Sprintf("written by racer %d", i)))
		}
		w := oneWinner(t, raceProcesses(t, url, lines), "File created successfully at: "+p, "Error: File "+p+" already exists")
		if got, want := readStore(t, store, fmt.Sprintf("c%d/target.txt", round)), fmt.Sprintf("written by racer %d", w); got != want {
			t.Errorf("round %d: content %q, want the winner's %q", round, got, want)
		}

		r := renameRace{round}
		for _, a := range decodeLines(t, execMemtool(t, r.setup(), "--store", url)) {
			if a[0].IsError {
				t.Fatal(a[0].Text())
			}
		}
		w = r.winnerOf(t, raceProcesses(t, url, r.lines()))
		base := fmt.Sprintf("r%d", round)
		if got := readStore(t, store, base+"/to/dst.txt"); got != r.text(w) {
			t.Errorf("round %d: destination holds %q, want the winner's %q", round, got, r.text(w))
		}
		for i := range racers {
			if i != w {
				if got := readStore(t, store, fmt.Sprintf("%s/src%d.txt", base, i)); got != r.text(i) {
					t.Errorf("round %d: loser %d's source holds %q", round, i, got)
				}
			}
		}
	}
}

// TestTenantIsolationOnObjectStores is TestTenantIsolation on the object
// stores: the hostile corpus as some 200 attacking tenants beside victim
// tenants leaks no byte, changes no victim, and gets the same answers as
// without the victims.
func TestTenantIsolationOnObjectStores(t *testing.T) {
	if testing.Short() {
		t.Skip("the corpus runs as some 200 tenants; skipped in -short")
	}
	lines := readCorpus(t)
	for _, be := range objectBackends {
		t.Run(be.name, func(t *testing.T) {
			alone := attack(t, be.url(t), lines)
			url := be.url(t)
			before := map[string]string{}
			for _, v := range victims {
				before[v] = seedVictim(t, url, v)
			}
			beside := attack(t, url, lines)
			if len(beside) != len(alone) || len(alone) < 150 {
				t.Fatalf("%d answers beside the victims, %d alone", len(beside), len(alone))
			}
			for i := range alone {
				if strings.Contains(beside[i], "VICTIM-SECRET") {
					t.Errorf("an attacker read a victim's file: %.400s", beside[i])
				}
				if beside[i] != alone[i] {
					t.Errorf("the answer depends on the victims' files:\nbeside: %.400s\n alone: %.400s", beside[i], alone[i])
				}
			}
			for _, v := range victims {
				if got := snapshot(t, openTestStore(t, url, v)); got != before[v] {
					t.Errorf("victim %s changed:\n%s\nwas:\n%s", v, got, before[v])
				}
			}
		})
	}
}
