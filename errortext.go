package memtool

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A failure's text, "Error: " included, is cut to MaxViewChars characters
// like a view (D8), with a note that says what was cut; a text under the
// cap stays as it is. The two texts that echo old_str cut it, and the list
// of lines, themselves; capError cuts any other at its end.

const errorPrefix = "Error: "

// capError cuts the text of a failed result to MaxViewChars characters.
func (m *Memory) capError(r Result) Result {
	if !r.IsError {
		return r
	}
	n := utf8.RuneCountInString(r.Text)
	if n <= m.opts.MaxViewChars {
		return r
	}
	note := fmt.Sprintf("… [Error text cut at %s characters: it is %s characters long.]", formatCount(m.opts.MaxViewChars), formatCount(n))
	r.Text = truncateRunes(r.Text, m.opts.MaxViewChars-utf8.RuneCountInString(note)) + note
	return r
}

// room is how many characters a failure's text has left for what it
// echoes, besides the fixed parts.
func (m *Memory) room(fixed ...string) int {
	n := utf8.RuneCountInString(errorPrefix)
	for _, f := range fixed {
		n += utf8.RuneCountInString(f)
	}
	return m.opts.MaxViewChars - n
}

// notFound refuses an old_str that the file at p does not hold.
func (m *Memory) notFound(oldStr, p string) error {
	head, tail := "No replacement was performed, old_str `", "` did not appear verbatim in "+p+"."
	shown, note := cutOldStr(validText(oldStr), m.room(head, tail))
	return Refusal(head + shown + tail + note)
}

// showKey prints a key of the tool input as sent, quoted if it holds
// anything unprintable or is not UTF-8, as paths are: no control or
// invisible character, and no stray byte, reaches the model's text raw.
func showKey(key string) string {
	if !utf8.ValidString(key) || strings.IndexFunc(key, func(r rune) bool { return !strconv.IsPrint(r) }) >= 0 {
		return strconv.Quote(key)
	}
	return key
}

// validText is s with each lone surrogate that unquoteSurrogates kept,
// and each other byte that is not UTF-8, shown as one U+FFFD.
func validText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			if i+2 < len(s) && s[i] == 0xED && s[i+1]&0xE0 == 0xA0 && s[i+2]&0xC0 == 0x80 {
				size = 3 // U+D800 to U+DFFF
			}
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// notUnique refuses an old_str that occurs on several lines of the file at
// p, shown as notFound shows it (validText). When both are long, old_str
// and the lines share the room equally.
func (m *Memory) notUnique(oldStr, p string, lines []int) error {
	head, mid, tail := "No replacement was performed. Multiple occurrences of old_str `", "` in lines: ", ". Please ensure it is unique"
	room := m.room(head, mid, tail)
	oldStr = validText(oldStr) // a piece of a character, given through Execute
	all := joinLines(lines)
	n := utf8.RuneCountInString(oldStr)
	lineRoom := len(all)
	switch {
	case n+len(all) <= room:
	case n <= room/2:
		lineRoom = room - n
	case len(all) > room/2:
		lineRoom = room / 2
	}
	shownLines := cutLines(lines, all, lineRoom)
	shown, note := cutOldStr(oldStr, room-len(shownLines))
	return Refusal(head + shown + mid + shownLines + tail + note)
}

// cutOldStr returns old_str as a failure shows it in room characters: whole
// and no note, or its start marked with "…" and a note to end the text
// with, which together fit in room.
func cutOldStr(s string, room int) (shown, note string) {
	n := utf8.RuneCountInString(s)
	if n <= room {
		return s, ""
	}
	noteOf := func(k int) string {
		return fmt.Sprintf(" [old_str cut: only its first %s of %s characters are shown.]", formatCount(k), formatCount(n))
	}
	k := max(0, room-1-utf8.RuneCountInString(noteOf(n)))
	return truncateRunes(s, k) + "…", noteOf(k)
}

// cutLines returns the list of lines (all, joined) in at most room
// characters: whole, or the first ones and how many more there are.
func cutLines(lines []int, all string, room int) string {
	if len(all) <= room {
		return all
	}
	more := func(n int) string {
		if n == 1 {
			return " … and 1 more line"
		}
		return " … and " + formatCount(n) + " more lines"
	}
	reserve := len(more(len(lines)))
	var sb strings.Builder
	k := 0
	for ; k < len(lines); k++ {
		next := strconv.Itoa(lines[k])
		if k > 0 {
			next = ", " + next
		}
		if sb.Len()+len(next)+reserve > room {
			break
		}
		sb.WriteString(next)
	}
	return strings.TrimPrefix(sb.String()+more(len(lines)-k), " ")
}
