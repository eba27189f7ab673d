package memtool

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// MaxInputBytes bounds one tool input as a whole, before anything is decoded.
const MaxInputBytes = 8 << 20

// A Command is one parsed memory tool call: *View, *Create, *StrReplace,
// *Insert, *Delete or *Rename.
type Command interface {
	// Name is the command as the model spells it ("view", "str_replace", …).
	Name() string
	// Target is the path the command is about (old_path for rename).
	Target() string
}

// View shows a file with line numbers, or lists a directory two levels deep.
type View struct {
	Path string
	// ViewRange is [start_line, end_line], 1-based and inclusive, end -1 for
	// the end of the file; nil when absent.
	ViewRange *[2]int64
}

// Create writes a new file.
type Create struct {
	Path     string
	FileText string
}

// StrReplace replaces the one occurrence of OldStr with NewStr. From
// JSON, an escaped lone surrogate in old_str is kept as its three-byte
// encoding, which matches no text (as in the TS SDK), not read as U+FFFD.
type StrReplace struct {
	Path   string
	OldStr string
	NewStr string // "" when omitted
}

// Insert puts InsertText after line InsertLine (0: before the first line).
type Insert struct {
	Path       string
	InsertLine int64
	InsertText string
}

// Delete removes a file, or a directory with everything in it.
type Delete struct {
	Path string
}

// Rename moves a file or directory; it never overwrites.
type Rename struct {
	OldPath string
	NewPath string
}

func (*View) Name() string       { return "view" }
func (*Create) Name() string     { return "create" }
func (*StrReplace) Name() string { return "str_replace" }
func (*Insert) Name() string     { return "insert" }
func (*Delete) Name() string     { return "delete" }
func (*Rename) Name() string     { return "rename" }

func (c *View) Target() string       { return c.Path }
func (c *Create) Target() string     { return c.Path }
func (c *StrReplace) Target() string { return c.Path }
func (c *Insert) Target() string     { return c.Path }
func (c *Delete) Target() string     { return c.Path }
func (c *Rename) Target() string     { return c.OldPath }

func inputErrorf(format string, args ...any) error {
	return &InputError{Reason: fmt.Sprintf(format, args...)}
}

type field struct {
	name     string
	required bool
}

// fields of each command, in the order the first missing one is reported.
var commandFields = map[string][]field{
	"view":        {{"path", true}, {"view_range", false}},
	"create":      {{"path", true}, {"file_text", true}},
	"str_replace": {{"path", true}, {"old_str", true}, {"new_str", false}},
	"insert":      {{"path", true}, {"insert_line", true}, {"insert_text", true}},
	"delete":      {{"path", true}},
	"rename":      {{"old_path", true}, {"new_path", true}},
}

// knownByFold maps every parameter name, case-folded, to its spelling.
var knownByFold = func() map[string]string {
	m := map[string]string{FoldKey("command"): "command"}
	for _, fields := range commandFields {
		for _, f := range fields {
			m[FoldKey(f.name)] = f.name
		}
	}
	return m
}()

// paramNames are the parameter names of every command, once each.
var paramNames = func() []string {
	var names []string
	for _, spelling := range knownByFold {
		names = append(names, spelling)
	}
	slices.Sort(names)
	return names
}()

// FoldKey maps s to one spelling per Unicode simple case folding class, the
// equivalence encoding/json uses to match keys to struct fields (so "ſ" and
// "K" (Kelvin) fold with "s" and "k"): two keys of one tool input that
// fold alike are refused by ParseCommand, as a key given twice is.
func FoldKey(s string) string {
	return strings.Map(func(r rune) rune {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		return least
	}, s)
}

// ParseCommand turns the input of one tool_use block into a Command.
//
// It is strict: the input must be one JSON object of at most MaxInputBytes;
// duplicate keys, keys that differ from a known parameter only by case, an
// unknown or missing command, a missing required parameter and a parameter
// of the wrong type are errors (an *InputError whose message names the
// problem). Parameters that belong to no command are ignored.
func ParseCommand(input []byte) (Command, error) {
	if len(input) > MaxInputBytes {
		return nil, inputErrorf("Tool input is too large: %d bytes, more than the limit of %d bytes", len(input), MaxInputBytes)
	}
	in := string(input)
	var buf [maxFastMembers]member
	obj, ok := fastMembers(in, &buf)
	if ok {
		ok = checkKeys(obj) == nil
	}
	if !ok {
		var err error
		if obj, err = decodeObject(in); err != nil {
			return nil, err
		}
	}
	return parseMembers(obj)
}

// checkKeys refuses duplicate keys and keys that differ from another key or
// a known parameter only by case. The fast path's keys are ASCII, for which
// Unicode's simple case folding is ASCII's.
func checkKeys(obj members) error {
	for i, m := range obj {
		for _, other := range obj[:i] {
			if strings.EqualFold(m.key, other.key) {
				return errFastKeys
			}
		}
		for _, known := range paramNames {
			if len(known) == len(m.key) && known != m.key && strings.EqualFold(known, m.key) {
				return errFastKeys
			}
		}
	}
	return nil
}

// errFastKeys sends an input with a key problem to the slow path, which
// words the error.
var errFastKeys = errors.New("key needs the slow path")

// parseMembers builds the command from the members of the input object.
func parseMembers(obj members) (Command, error) {
	rawCmd, ok := obj.get("command")
	if !ok {
		return nil, inputErrorf("Missing required parameter 'command'")
	}
	name, ok := unquote(rawCmd)
	if !ok {
		return nil, inputErrorf("Invalid parameter 'command': expected a string, got %s", jsonKind(rawCmd))
	}
	fields, ok := commandFields[name]
	if !ok {
		return nil, inputErrorf("Unknown command: %s", showCommand(name))
	}
	for _, f := range fields {
		if _, present := obj.get(f.name); f.required && !present {
			return nil, inputErrorf("Missing required parameter '%s' for command '%s'", f.name, name)
		}
	}
	p := fieldParser{obj: obj, command: name}
	var cmd Command
	switch name {
	case "view":
		c := &View{Path: p.str("path")}
		if raw, ok := obj.get("view_range"); ok && !isNull(raw) {
			c.ViewRange = p.viewRange(raw)
		}
		cmd = c
	case "create":
		cmd = &Create{Path: p.str("path"), FileText: p.str("file_text")}
	case "str_replace":
		c := &StrReplace{Path: p.str("path"), OldStr: p.oldStr()}
		if raw, ok := obj.get("new_str"); ok && !isNull(raw) {
			c.NewStr = p.str("new_str")
		}
		cmd = c
	case "insert":
		cmd = &Insert{Path: p.str("path"), InsertLine: p.integer("insert_line"), InsertText: p.str("insert_text")}
	case "delete":
		cmd = &Delete{Path: p.str("path")}
	case "rename":
		cmd = &Rename{OldPath: p.str("old_path"), NewPath: p.str("new_path")}
	}
	if p.err != nil {
		return nil, p.err
	}
	return cmd, nil
}

// decodeObject reads one JSON object into its members with encoding/json,
// refusing duplicate and case-variant keys, which encoding/json would
// silently merge, and wording every error.
func decodeObject(input string) (members, error) {
	dec := json.NewDecoder(strings.NewReader(input))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, inputErrorf("Tool input is not valid JSON: %s", jsonError(err))
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, inputErrorf("Tool input must be a JSON object")
	}
	var obj members
	seen := map[string]bool{}
	folded := map[string]string{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, inputErrorf("Tool input is not valid JSON: %s", jsonError(err))
		}
		key := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, inputErrorf("Tool input is not valid JSON: %s", jsonError(err))
		}
		if seen[key] {
			return nil, inputErrorf("Duplicate parameter '%s' in tool input", showKey(key))
		}
		fold := FoldKey(key)
		if other, ok := folded[fold]; ok {
			return nil, inputErrorf("Parameters '%s' and '%s' differ only by case", showKey(other), showKey(key))
		}
		if known, ok := knownByFold[fold]; ok && known != key {
			return nil, inputErrorf("Unknown parameter '%s' (did you mean '%s'?)", key, known)
		}
		folded[fold] = key
		seen[key] = true
		if _, ok := knownByFold[fold]; ok {
			obj = append(obj, member{key, string(raw)})
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, inputErrorf("Tool input is not valid JSON: %s", jsonError(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, inputErrorf("Tool input must be a single JSON object")
	}
	return obj, nil
}

// showCommand prints an unknown command name as sent, quoted if it is empty
// or holds anything unprintable, and cut if it is long.
func showCommand(name string) string {
	if len(name) > 64 {
		name = strings.ToValidUTF8(name[:64], "") + "…" // not inside a character
	}
	if name == "" || strings.IndexFunc(name, func(r rune) bool { return !strconv.IsPrint(r) || r == ' ' }) >= 0 {
		return strconv.Quote(name)
	}
	return name
}

func jsonError(err error) string {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return "unexpected end of input"
	}
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return fmt.Sprintf("%s (at byte %d)", syn.Error(), syn.Offset)
	}
	return err.Error()
}

func isNull(raw string) bool { return strings.TrimSpace(raw) == "null" }

// jsonKind names the JSON type of raw for error messages.
func jsonKind(raw string) string {
	s := strings.TrimSpace(raw)
	if len(s) == 0 {
		return "nothing"
	}
	switch s[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "the number " + s
}

// jsonShow prints a short, printable JSON value as sent, else its kind, for error messages.
func jsonShow(raw string) string {
	s := strings.TrimSpace(raw)
	if len(s) > 64 || showKey(s) != s { // long, or not printable UTF-8
		return jsonKind(raw)
	}
	return s
}

// fieldParser decodes typed parameters, keeping the first error.
type fieldParser struct {
	obj     members
	command string
	err     error
}

func (p *fieldParser) fail(field, want string, raw string) {
	if p.err == nil {
		p.err = inputErrorf("Invalid parameter '%s' for command '%s': expected %s, got %s", field, p.command, want, jsonKind(raw))
	}
}

// failShow is fail with the value itself shown when it is short.
func (p *fieldParser) failShow(field, want string, raw string) {
	if p.err == nil {
		p.err = inputErrorf("Invalid parameter '%s' for command '%s': expected %s, got %s", field, p.command, want, jsonShow(raw))
	}
}

func (p *fieldParser) str(field string) string {
	raw, _ := p.obj.get(field)
	s, ok := unquote(strings.TrimSpace(raw))
	if !ok {
		p.fail(field, "a string", raw)
	}
	return s
}

// oldStr is the old_str parameter, a lone surrogate kept (unquoteSurrogates).
func (p *fieldParser) oldStr() string {
	raw, _ := p.obj.get("old_str")
	s, ok := unquoteSurrogates(strings.TrimSpace(raw))
	if !ok {
		p.fail("old_str", "a string", raw)
	}
	return s
}

func (p *fieldParser) integer(field string) int64 {
	raw, _ := p.obj.get(field)
	n, ok := jsonInt(raw)
	if !ok {
		p.fail(field, "an integer", raw)
	}
	return n
}

func (p *fieldParser) viewRange(raw string) *[2]int64 {
	var buf [2]string
	elems, ok := splitArray(raw, buf[:0])
	if !ok || len(elems) != 2 {
		p.failShow("view_range", "a list of two integers [start_line, end_line]", raw)
		return nil
	}
	var r [2]int64
	for i, e := range elems {
		n, ok := jsonInt(e)
		if !ok {
			p.failShow("view_range", "a list of two integers [start_line, end_line]", raw)
			return nil
		}
		r[i] = n
	}
	return &r
}

// jsonInt accepts a JSON number whose value is an integer that fits in
// int64: 2, 2.0 and 2e0, not 1.5, "2", 1e30, or 1e-400 and
// 1.0000000000000001, which a float64 would round to an integer. The
// value is read from the decimal text exactly, never through a float.
func jsonInt(raw string) (int64, bool) {
	s := strings.TrimSpace(raw)
	if s == "" || !(s[0] == '-' || '0' <= s[0] && s[0] <= '9') {
		return 0, false
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, true
	}
	// raw is a valid JSON value, so s is -?int(.frac)?([eE][+-]?exp)?:
	// its value is digits × 10^exp10.
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	mantissa, exp, hasExp := strings.Cut(strings.ToLower(s), "e")
	whole, frac, _ := strings.Cut(mantissa, ".")
	digits := strings.TrimLeft(whole+frac, "0")
	if digits == "" {
		return 0, true // zero, whatever the exponent
	}
	exp10 := -len(frac)
	if hasExp {
		e, err := strconv.Atoi(exp)
		if err != nil || e < -MaxInputBytes || e > MaxInputBytes {
			return 0, false // far too large, or a fraction
		}
		exp10 += e
	}
	trimmed := strings.TrimRight(digits, "0")
	exp10 += len(digits) - len(trimmed)
	if exp10 < 0 || len(trimmed)+exp10 > 19 {
		return 0, false // a fraction, or too large for int64
	}
	text := trimmed + strings.Repeat("0", exp10)
	if neg {
		text = "-" + text
	}
	n, err := strconv.ParseInt(text, 10, 64)
	return n, err == nil
}
