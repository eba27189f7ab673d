package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Clients of one memtool serve share its policy stack, so limits.max_files
// and max_bytes hold exactly, however many of them write at once, each a
// turn of two creates; two replicas on one store may each pass a check
// while the other writes, overshooting by at most one entry (and one
// file's bytes) for the other replica, as package limits documents. A
// secret assembled by clients editing one file at once is refused
// whichever edit completes it. On a directory, SQLite and PostgreSQL.
func TestBypassServeConcurrentClients(t *testing.T) {
	t.Parallel()
	const maxFiles, maxBytes, clients = 6, 200, 16
	policy := filepath.Join(t.TempDir(), "policy.json")
	os.WriteFile(policy, fmt.Appendf(nil, `{"limits":{"max_files":%d,"max_bytes":%d},"secrets":"reject"}`, maxFiles, maxBytes), 0o600)
	for _, be := range tenantBackends() {
		for _, replicas := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/%d", be.Name, replicas), func(t *testing.T) {
				t.Parallel()
				url := be.URL(t)
				token := addKey(t, url, "alice", "write")
				var bases []string
				for range replicas {
					bases = append(bases, startServe(t, plainBinary(t), url, "--policy", policy, "--rate", "-1").url)
				}
				race := func(body func(c int) string) {
					var wg sync.WaitGroup
					start := make(chan struct{})
					for c := range clients {
						wg.Go(func() {
							<-start
							if status, answer, err := post(bases[c%replicas], token, body(c)); err != nil || status != 200 {
								t.Errorf("client %d: %d %v %s", c, status, err, answer)
							}
						})
					}
					close(start)
					wg.Wait()
				}
				// Each file holds 30 bytes: max_bytes would let 6 be, max_files 6.
				text := strings.Repeat("x", 30)
				race(func(c int) string {
					return fmt.Sprintf(`[{"command":"create","path":"/memories/c%02da.md","file_text":"%s"},`+
						`{"command":"create","path":"/memories/c%02db.md","file_text":"%s"}]`, c, text, c, text)
				})
				_, view := mustPost(t, bases[0], token, `{"command":"view","path":"/memories"}`)
				files := strings.Count(view, ".md")
				if files > maxFiles+replicas-1 || files < maxFiles {
					t.Errorf("%d clients, %d replicas, max_files %d: %d files made\n%s", clients, replicas, maxFiles, files, view)
				}

				// A token in pieces: each client puts its piece in.
				const token40 = "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
				// The token's file needs the room of the files made.
				for c := range clients {
					for _, ab := range "ab" {
						post(bases[0], token, fmt.Sprintf(`{"command":"delete","path":"/memories/c%02d%c.md"}`, c, ab))
					}
				}
				pieces := strings.Split(token40[4:], "")
				if _, answer := mustPost(t, bases[0], token, `{"command":"create","path":"/memories/k.md","file_text":"ghp_`+strings.Join(holes(len(pieces)), "")+`"}`); strings.Contains(answer, `"is_error":true`) {
					t.Fatalf("create of the token's file: %s", answer)
				}
				race(func(c int) string {
					var b strings.Builder
					b.WriteString("[")
					for i := c; i < len(pieces); i += clients {
						if i > c {
							b.WriteString(",")
						}
						fmt.Fprintf(&b, `{"command":"str_replace","path":"/memories/k.md","old_str":"<%02d>","new_str":%q}`, i, pieces[i])
					}
					b.WriteString("]")
					return b.String()
				})
				// Every edit but the one that would complete it lands.
				_, body := mustPost(t, bases[0], token, `{"command":"view","path":"/memories/k.md"}`)
				var a answer
				json.Unmarshal([]byte(body), &a)
				if file := a.Text(); strings.Contains(file, token40) || strings.Count(file, "<") != 1 {
					t.Errorf("the token in pieces, all put in at once, but one: /memories/k.md is %s", file)
				}
			})
		}
	}
}

// holes returns the placeholders <00>, <01>, … that the clients fill.
func holes(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("<%02d>", i)
	}
	return out
}
