package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtool/memtool/encrypt"
	"github.com/memtool/memtool/pgstore/pgtest"
)

// TestRacesUnderPoliciesOnSharedBackends runs the races of
// TestRacesUnderPolicies (edits of one file, creates and renames onto one
// name, a rename racing edits and a create) with 4 memtool exec processes
// under each policy of racePolicies on PostgreSQL and on S3, where the
// policies' own files (history's versions and counters, expiry's index)
// live in the shared backend too.
func TestRacesUnderPoliciesOnSharedBackends(t *testing.T) {
	t.Parallel()
	key, _ := encrypt.NewKey("k1")
	for _, backend := range []string{"postgres", "s3"} {
		for _, p := range racePolicies {
			t.Run(backend+"/"+p.name, func(t *testing.T) {
				t.Parallel()
				tmp := t.TempDir()
				var url string
				if backend == "postgres" {
					url = pgtest.URL(t)
				} else {
					url = s3URL(t, "")
				}
				policy := p.policy
				if strings.Contains(policy, "%q") {
					policy = fmt.Sprintf(policy, filepath.Join(tmp, "audit.jsonl"))
				}
				racePolicy(t, url, policyEnv(t, policy, key))
			})
		}
	}
}
