package memtool_test

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/memtool/memtool"
)

func FuzzCleanPath(f *testing.F) {
	for _, p := range seedPaths(f) {
		f.Add(p)
	}
	for _, tc := range gateCases {
		if len(tc.in) <= 4096 { // the huge ones only slow the fuzzer down
			f.Add(tc.in)
		}
	}
	f.Fuzz(func(t *testing.T, p string) {
		name, dir, err := memtool.CleanPath(p)
		if err != nil {
			var pe *memtool.PathError
			if !errors.As(err, &pe) || pe.Path != p || pe.Reason == "" || err.Error() != pe.Reason {
				t.Fatalf("CleanPath(%q): error %#v is not a *PathError for the path with its reason", p, err)
			}
			// The reason reaches the model: printable text only, whatever
			// the path held.
			if !utf8.ValidString(pe.Reason) || strings.IndexFunc(pe.Reason, func(r rune) bool { return !strconv.IsPrint(r) }) >= 0 {
				t.Fatalf("CleanPath(%q): reason %q is not clean text", p, pe.Reason)
			}
			return
		}
		// What the gate lets through.
		switch {
		case len(p) > memtool.MaxPathBytes:
			t.Fatalf("accepted %d bytes", len(p))
		case !utf8.ValidString(p):
			t.Fatalf("accepted invalid UTF-8 %q", p)
		case strings.ContainsAny(p, "\\\x00"):
			t.Fatalf("accepted a backslash or NUL in %q", p)
		case strings.IndexFunc(p, unicode.IsControl) >= 0:
			t.Fatalf("accepted a control character in %q", p)
		case !norm.NFKC.IsNormalString(p):
			// Cross-checks the generated table in pathtables.go.
			t.Fatalf("accepted %q (%+q), which NFKC changes to %+q", p, p, norm.NFKC.String(p))
		case p != memtool.Root && !strings.HasPrefix(p, memtool.Root+"/"):
			t.Fatalf("accepted %q outside the root", p)
		}
		// What the gate returns.
		if dir != strings.HasSuffix(p, "/") {
			t.Fatalf("CleanPath(%q): dir = %v", p, dir)
		}
		if name == "" {
			if path.Clean(p) != memtool.Root {
				t.Fatalf("CleanPath(%q) = root, but path.Clean gives %q", p, path.Clean(p))
			}
			return
		}
		if !fs.ValidPath(name) || name == "." {
			t.Fatalf("CleanPath(%q) = %q, not a valid fs path", p, name)
		}
		if path.Clean(name) != name {
			t.Fatalf("CleanPath(%q) = %q, not clean", p, name)
		}
		if got := path.Clean(p); got != memtool.VirtualPath(name) {
			t.Fatalf("CleanPath(%q) = %q, but path.Clean gives %q", p, name, got)
		}
		parts := strings.Split(name, "/")
		if len(parts) > memtool.MaxDepth {
			t.Fatalf("CleanPath(%q) = %q: %d components", p, name, len(parts))
		}
		for _, c := range parts {
			if c == ".." || len(c) > memtool.MaxComponentBytes {
				t.Fatalf("CleanPath(%q) = %q: component %q", p, name, c)
			}
			if why := unportable(c); why != "" {
				t.Fatalf("CleanPath(%q) = %q: component %q %s", p, name, c, why)
			}
		}
		if strings.Contains(p, ":") || percentEscape.MatchString(p) {
			t.Fatalf("accepted a colon or a percent escape in %q", p)
		}
		// The clean name passes the gate again, to itself.
		again, againDir, err := memtool.CleanPath(memtool.VirtualPath(name))
		if err != nil || again != name || againDir {
			t.Fatalf("CleanPath(VirtualPath(%q)) = %q, %v, %v", name, again, againDir, err)
		}
	})
}

var percentEscape = regexp.MustCompile(`%([0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4})`)

// unportable says why a name the gate accepted may not be used on every
// OS or is the storage layer's, as DEVIATIONS.md lists the rules, or "".
func unportable(c string) string {
	if strings.HasSuffix(c, ".") || strings.HasSuffix(c, " ") {
		return "ends with a dot or a space"
	}
	base, _, _ := strings.Cut(c, ".")
	switch dev := strings.ToUpper(strings.TrimRight(base, " ")); {
	case dev == "CON", dev == "PRN", dev == "AUX", dev == "NUL", dev == "CONIN$", dev == "CONOUT$",
		len(dev) == 4 && (strings.HasPrefix(dev, "COM") || strings.HasPrefix(dev, "LPT")) && dev[3] >= '0' && dev[3] <= '9':
		return "is a Windows device name"
	}
	for _, prefix := range []string{".memtool", ".memstore", ".tmp-", ".lock"} {
		if strings.HasPrefix(strings.ToLower(c), prefix) {
			return "is the storage layer's"
		}
	}
	return ""
}

// gateCases pin the gate's answers: the clean name, or the exact message.
var gateCases = []struct {
	name string
	in   string
	want string // the clean name, or the error message
	dir  bool
	err  bool
}{
	// Accepted.
	{"root", "/memories", "", false, false},
	{"root slash", "/memories/", "", true, false},
	{"root dot", "/memories/.", "", false, false},
	{"root via dotdot", "/memories/a/..", "", false, false},
	{"file", "/memories/notes.txt", "notes.txt", false, false},
	{"nested", "/memories/a/b/c.md", "a/b/c.md", false, false},
	{"double slashes", "/memories//a//b/", "a/b", true, false},
	{"dotdot inside", "/memories/a/../b.txt", "b.txt", false, false},
	{"hidden", "/memories/.hidden", ".hidden", false, false},
	{"dots inside a name", "/memories/a..b", "a..b", false, false},
	{"space inside", "/memories/a b.txt", "a b.txt", false, false},
	{"precomposed accent", "/memories/caf\u00e9.md", "caf\u00e9.md", false, false},
	{"emoji", "/memories/\U0001F600.md", "\U0001F600.md", false, false},
	{"CJK", "/memories/日本語.txt", "日本語.txt", false, false},
	{"percent without hex", "/memories/100%", "100%", false, false},
	{"percent then non-hex", "/memories/50%off", "50%off", false, false},
	{"device-like but longer", "/memories/CONSOLE", "CONSOLE", false, false},
	{"COM10", "/memories/COM10", "COM10", false, false},
	{"tmp without dash", "/memories/.tmp", ".tmp", false, false},
	{"name of 255 bytes", "/memories/" + strings.Repeat("a", 255), strings.Repeat("a", 255), false, false},
	{"depth 32", "/memories" + strings.Repeat("/d", 32), strings.Repeat("d/", 31) + "d", false, false},
	{"depth 33 resolved to 32", "/memories" + strings.Repeat("/d", 33) + "/..", strings.Repeat("d/", 31) + "d", false, false},
	{"1024 bytes", "/memories/" + strings.Repeat(strings.Repeat("a", 200)+"/", 5) + strings.Repeat("b", 9), strings.Repeat(strings.Repeat("a", 200)+"/", 5) + strings.Repeat("b", 9), false, false},

	// Prefix.
	{"sibling prefix", "/memoriesX", "Path must be /memories or start with /memories/, got: /memoriesX", false, true},
	{"sibling dir", "/memories_backup/a.txt", "Path must be /memories or start with /memories/, got: /memories_backup/a.txt", false, true},
	{"relative", "memories/a.txt", "Path must be /memories or start with /memories/, got: memories/a.txt", false, true},
	{"empty", "", "Path must be /memories or start with /memories/, got: ", false, true},
	{"slash", "/", "Path must be /memories or start with /memories/, got: /", false, true},
	{"double leading slash", "//memories/a.txt", "Path must be /memories or start with /memories/, got: //memories/a.txt", false, true},
	{"case", "/Memories/a.txt", "Path must be /memories or start with /memories/, got: /Memories/a.txt", false, true},
	{"outside with control", "/etc\n/passwd", `Path must be /memories or start with /memories/, got: "/etc\n/passwd"`, false, true},

	// Escape.
	{"parent", "/memories/..", "Path /memories/.. would escape /memories directory", false, true},
	{"parent file", "/memories/../etc/passwd", "Path /memories/../etc/passwd would escape /memories directory", false, true},
	{"escape after descending", "/memories/a/../../x", "Path /memories/a/../../x would escape /memories directory", false, true},
	{"escape and back", "/memories/../memories/a.txt", "Path /memories/../memories/a.txt would escape /memories directory", false, true},

	// Bytes and characters. A path holding anything unprintable is quoted.
	{"NUL", "/memories/a.txt\x00.md", `Path "/memories/a.txt\x00.md" contains a control character (U+0000), which is not allowed`, false, true},
	{"newline", "/memories/a\nb", `Path "/memories/a\nb" contains a control character (U+000A), which is not allowed`, false, true},
	{"C1 control", "/memories/a\u0085b", `Path "/memories/a\u0085b" contains a control character (U+0085), which is not allowed`, false, true},
	{"invalid UTF-8", "/memories/\xc0\xae\xc0\xae/x", `Path "/memories/\xc0\xae\xc0\xae/x" is not valid UTF-8`, false, true},
	{"backslash", `/memories/a\..\..\x`, `Path /memories/a\..\..\x contains a backslash (U+005C), which is not allowed`, false, true},
	{"backslash before prefix", `\memories\a.txt`, `Path must be /memories or start with /memories/, got: \memories\a.txt`, false, true},
	{"colon", "/memories/a.txt:stream", "Path /memories/a.txt:stream contains a colon (U+003A), which is not allowed", false, true},
	{"percent dots", "/memories/%2e%2e/x", "Path /memories/%2e%2e/x contains a percent-encoded character, which is not allowed (paths are never decoded)", false, true},
	{"percent upper", "/memories/%2E%2E/x", "Path /memories/%2E%2E/x contains a percent-encoded character, which is not allowed (paths are never decoded)", false, true},
	{"double encoded", "/memories/%252e", "Path /memories/%252e contains a percent-encoded character, which is not allowed (paths are never decoded)", false, true},
	{"percent u", "/memories/%u002e%u002e", "Path /memories/%u002e%u002e contains a percent-encoded character, which is not allowed (paths are never decoded)", false, true},
	{"percent space", "/memories/a%20b", "Path /memories/a%20b contains a percent-encoded character, which is not allowed (paths are never decoded)", false, true},
	{"division slash", "/memories/..\u2215etc", "Path /memories/..\u2215etc contains a look-alike of '.', '/' or '\\' (U+2215), which is not allowed", false, true},
	{"fraction slash", "/memories/a\u2044b", "Path /memories/a\u2044b contains a look-alike of '.', '/' or '\\' (U+2044), which is not allowed", false, true},
	{"ideographic full stop", "/memories/\u3002\u3002/x", "Path /memories/\u3002\u3002/x contains a look-alike of '.', '/' or '\\' (U+3002), which is not allowed", false, true},
	{"fullwidth dot", "/memories/\uff0e\uff0e/x", "Path /memories/\uff0e\uff0e/x contains a character that Unicode normalisation (NFKC) would change (U+FF0E), which is not allowed", false, true},
	{"fullwidth solidus", "/memories/a\uff0fb", "Path /memories/a\uff0fb contains a character that Unicode normalisation (NFKC) would change (U+FF0F), which is not allowed", false, true},
	{"two dot leader", "/memories/\u2025/x", "Path /memories/\u2025/x contains a character that Unicode normalisation (NFKC) would change (U+2025), which is not allowed", false, true},
	{"kelvin sign", "/memories/\u212a.txt", "Path /memories/\u212a.txt contains a character that Unicode normalisation (NFKC) would change (U+212A), which is not allowed", false, true},
	{"decomposed accent", "/memories/cafe\u0301.md", "Path /memories/cafe\u0301.md contains a character that Unicode normalisation (NFKC) would change (U+0301), which is not allowed", false, true},
	{"zero width space", "/memories/a\u200b.txt", `Path "/memories/a\u200b.txt" contains an invisible formatting character (U+200B), which is not allowed`, false, true},
	{"bidi override", "/memories/\u202etxt.exe", `Path "/memories/\u202etxt.exe" contains an invisible formatting character (U+202E), which is not allowed`, false, true},
	{"no-break space", "/memories/a\u00a0b", `Path "/memories/a\u00a0b" contains a non-ASCII space (U+00A0), which is not allowed`, false, true},
	{"control after another refusal", "/memories/%00\x00", `Path "/memories/%00\x00" contains a percent-encoded character, which is not allowed (paths are never decoded)`, false, true},
	{"control after a backslash", "/memories/a\\b\x1b[2J", `Path "/memories/a\\b\x1b[2J" contains a backslash (U+005C), which is not allowed`, false, true},
	{"replacement character", "/memories/\ufffd.txt", "Path /memories/\ufffd.txt contains the replacement character (U+FFFD), which is not allowed", false, true},
	{"private use", "/memories/\ue000", `Path "/memories/\ue000" contains an unassigned or private-use character (U+E000), which is not allowed`, false, true},

	// Windows names.
	{"CON", "/memories/CON", `Path /memories/CON is not allowed: "CON" is a reserved device name on Windows`, false, true},
	{"con.txt", "/memories/con.txt", `Path /memories/con.txt is not allowed: "con.txt" is a reserved device name on Windows`, false, true},
	{"nul in a dir", "/memories/a/nul.tar.gz/x", `Path /memories/a/nul.tar.gz/x is not allowed: "nul.tar.gz" is a reserved device name on Windows`, false, true},
	{"Lpt9", "/memories/Lpt9", `Path /memories/Lpt9 is not allowed: "Lpt9" is a reserved device name on Windows`, false, true},
	{"CONIN$", "/memories/CONIN$", `Path /memories/CONIN$ is not allowed: "CONIN$" is a reserved device name on Windows`, false, true},
	{"device with space", "/memories/AUX .txt", `Path /memories/AUX .txt is not allowed: "AUX .txt" is a reserved device name on Windows`, false, true},
	{"trailing dot", "/memories/a.txt.", `Path /memories/a.txt. is not allowed: the name "a.txt." ends with a dot or a space`, false, true},
	{"trailing space", "/memories/a.txt ", `Path /memories/a.txt  is not allowed: the name "a.txt " ends with a dot or a space`, false, true},
	{"trailing dot dir", "/memories/sub./b.txt", `Path /memories/sub./b.txt is not allowed: the name "sub." ends with a dot or a space`, false, true},
	{"three dots", "/memories/...", `Path /memories/... is not allowed: the name "..." ends with a dot or a space`, false, true},
	{"dotdot space", "/memories/.. /x", `Path /memories/.. /x is not allowed: the name ".. " ends with a dot or a space`, false, true},

	// Reserved names.
	{"lock file", "/memories/.memtool.lock", `Path /memories/.memtool.lock is not allowed: names starting with ".memtool" are reserved for the storage layer`, false, true},
	{"memtool temp", "/memories/a/.memtool-tmp-1", `Path /memories/a/.memtool-tmp-1 is not allowed: names starting with ".memtool" are reserved for the storage layer`, false, true},
	{"tmp-", "/memories/.tmp-1234-abcd", `Path /memories/.tmp-1234-abcd is not allowed: names starting with ".tmp-" are reserved for the storage layer`, false, true},
	{"lock", "/memories/.lock", `Path /memories/.lock is not allowed: names starting with ".lock" are reserved for the storage layer`, false, true},
	{"lock file in upper case", "/memories/.MEMTOOL.LOCK", `Path /memories/.MEMTOOL.LOCK is not allowed: names starting with ".memtool" are reserved for the storage layer`, false, true},
	{"temp in mixed case", "/memories/.Tmp-1", `Path /memories/.Tmp-1 is not allowed: names starting with ".tmp-" are reserved for the storage layer`, false, true},
	{"memstore", "/memories/.memstore/keys", `Path /memories/.memstore/keys is not allowed: names starting with ".memstore" are reserved for the storage layer`, false, true},

	// Limits.
	{"1025 bytes", "/memories/" + strings.Repeat("a/", 507) + "b", "Path is too long: 1025 bytes, more than the limit of 1024 bytes", false, true},
	{"1 MiB", "/memories/" + strings.Repeat("a/", 1<<19), "Path is too long: 1048586 bytes, more than the limit of 1024 bytes", false, true},
	{"name of 256 bytes", "/memories/" + strings.Repeat("a", 256), "Path /memories/" + strings.Repeat("a", 256) + " is not allowed: a name is 256 bytes long, more than the limit of 255 bytes", false, true},
	{"name of 256 bytes in UTF-8", "/memories/" + strings.Repeat("é", 128), "Path /memories/" + strings.Repeat("é", 128) + " is not allowed: a name is 256 bytes long, more than the limit of 255 bytes", false, true},
	{"depth 33", "/memories" + strings.Repeat("/d", 33), "Path /memories" + strings.Repeat("/d", 33) + " is too deep: 33 levels below /memories, more than the limit of 32", false, true},
}

func TestCleanPathMessages(t *testing.T) {
	for _, tc := range gateCases {
		t.Run(tc.name, func(t *testing.T) {
			name, dir, err := memtool.CleanPath(tc.in)
			if tc.err {
				var pe *memtool.PathError
				if !errors.As(err, &pe) {
					t.Fatalf("CleanPath(%q) = %q, %v, %v; want the error %q", tc.in, name, dir, err, tc.want)
				}
				if pe.Reason != tc.want || pe.Path != tc.in {
					t.Fatalf("CleanPath(%q) error:\n got %q (path %q)\nwant %q", tc.in, pe.Reason, pe.Path, tc.want)
				}
				return
			}
			if err != nil || name != tc.want || dir != tc.dir {
				t.Fatalf("CleanPath(%q) = %q, %v, %v; want %q, %v", tc.in, name, dir, err, tc.want, tc.dir)
			}
		})
	}
}

func TestVirtualPath(t *testing.T) {
	for name, want := range map[string]string{"": "/memories", "a": "/memories/a", "a/b.txt": "/memories/a/b.txt"} {
		if got := memtool.VirtualPath(name); got != want {
			t.Errorf("VirtualPath(%q) = %q, want %q", name, got, want)
		}
	}
}

// Every rune, alone in a name and between letters: whatever the gate
// accepts, NFKC leaves unchanged (an exhaustive check of pathtables.go).
func TestCleanPathEveryRuneIsNFKCStable(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		for _, p := range []string{"/memories/" + string(r), "/memories/a" + string(r) + "b"} {
			if norm.NFKC.IsNormalString(p) {
				continue
			}
			if _, _, err := memtool.CleanPath(p); err == nil {
				t.Errorf("accepted %+q, which NFKC changes to %+q", p, norm.NFKC.String(p))
			}
		}
	}
}

// The symbols and punctuation that Unicode's confusables.txt maps to '/',
// '\' or '.' and that NFKC leaves alone (letters and digits of a script
// that it also maps, such as KATAKANA LETTER NO, stay usable in names),
// and the heavy solidi: each reads as a separator or a dot, so the gate
// refuses it, alone in a name and between letters.
func TestCleanPathRefusesSeparatorLookalikes(t *testing.T) {
	for _, r := range []rune{
		0x1735, 0x2041, 0x2044, 0x2215, 0x2571, 0x27CB, 0x29F8, 0x31D3, 0x1D23A, 0x1F67C, // '/'
		0x2216, 0x2572, 0x27CD, 0x29F5, 0x29F9, 0x31D4, 0x1D20F, 0x1D23B, 0x1F67D, // '\'
		0x0701, 0x0702, 0x3002, 0xA4F8, 0xA60E, 0x10A50, // '.'
	} {
		for _, p := range []string{"/memories/" + string(r), "/memories/a" + string(r) + "b"} {
			want := fmt.Sprintf("Path %s contains a look-alike of '.', '/' or '\\' (U+%04X), which is not allowed", p, r)
			_, _, err := memtool.CleanPath(p)
			if err == nil || err.Error() != want {
				t.Errorf("CleanPath(%q) = %v, want %q", p, err, want)
			}
		}
	}
}
