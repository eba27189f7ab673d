package memtool

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"io/fs"
	"log/slog"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// Defaults of Options.
const (
	DefaultMaxFileSize  = 1 << 20  // largest file a command may write
	DefaultMaxReadSize  = 16 << 20 // largest stored file memtool reads
	DefaultMaxViewChars = 16000    // longest view or error text, in characters
	DefaultMaxImageSize = 5 << 20  // largest image returned as an image block
	MaxLines            = 999999   // most lines a viewed file may have
)

// Options configure a Memory. The zero value (or nil) means the defaults.
type Options struct {
	// Overwrite lets create replace an existing regular file (off: create
	// fails with "already exists"). Directories are never replaced.
	Overwrite bool
	// MaxFileSize is the largest file, in bytes, a command may write: create,
	// or the result of an edit. Default DefaultMaxFileSize.
	MaxFileSize int64
	// MaxReadSize is the largest stored file, in bytes, that view and edits
	// read into memory. Default DefaultMaxReadSize.
	MaxReadSize int64
	// MaxViewChars caps view output and the text of a failure, in
	// characters (code points). Default DefaultMaxViewChars.
	MaxViewChars int
	// MaxImageSize is the largest image, in bytes, view returns as an image
	// block. Default DefaultMaxImageSize.
	MaxImageSize int64
	// Logger receives unexpected store failures with their detail (the model
	// only learns that an internal error happened). Default slog.Default().
	Logger *slog.Logger
}

// Memory runs the memory tool's six commands against a Store. It is safe for
// concurrent use: the Anthropic SDKs run one turn's tool calls in parallel.
type Memory struct {
	store Store
	opts  Options
	// writes orders the multi-step fallbacks used when the store lacks
	// Renamer or RemoveAller against every other change: a fallback holds
	// it alone, every other command that changes the store shares it.
	writes sync.RWMutex
}

// New returns a Memory over store. opts may be nil.
func New(store Store, opts *Options) *Memory {
	m := &Memory{store: store}
	if opts != nil {
		m.opts = *opts
	}
	if m.opts.MaxFileSize <= 0 {
		m.opts.MaxFileSize = DefaultMaxFileSize
	}
	if m.opts.MaxReadSize <= 0 {
		m.opts.MaxReadSize = DefaultMaxReadSize
	}
	if m.opts.MaxViewChars <= 0 {
		m.opts.MaxViewChars = DefaultMaxViewChars
	}
	if m.opts.MaxImageSize <= 0 {
		m.opts.MaxImageSize = DefaultMaxImageSize
	}
	if m.opts.Logger == nil {
		m.opts.Logger = slog.Default()
	}
	return m
}

// Store returns the store Memory runs on.
func (m *Memory) Store() Store { return m.store }

// Run parses one tool input and executes it.
func (m *Memory) Run(ctx context.Context, input []byte) Result {
	cmd, err := ParseCommand(input)
	if err != nil {
		return m.capError(errorResult(err.Error()))
	}
	return m.Execute(ctx, cmd)
}

// Execute runs one command. A failed command is a Result with IsError set
// and changes nothing; Execute itself never fails.
func (m *Memory) Execute(ctx context.Context, cmd Command) Result {
	return m.capError(m.execute(ctx, cmd))
}

func (m *Memory) execute(ctx context.Context, cmd Command) Result {
	if err := ctx.Err(); err != nil {
		return errorResult(fmt.Sprintf("The %s command was cancelled before it ran", cmd.Name()))
	}
	defer m.lock(cmd)()
	var r Result
	var err error
	switch c := cmd.(type) {
	case *View:
		r, err = m.view(ctx, c)
	case *Create:
		r, err = m.create(ctx, c)
	case *StrReplace:
		r, err = m.strReplace(ctx, c)
	case *Insert:
		r, err = m.insert(ctx, c)
	case *Delete:
		r, err = m.delete(ctx, c)
	case *Rename:
		r, err = m.rename(ctx, c)
	default:
		return errorResult(fmt.Sprintf("Unknown command: %s", cmd.Name()))
	}
	if err != nil {
		return m.failure(ctx, cmd, err)
	}
	return r
}

// A Refusal is a failure whose text is meant for the model: Memory answers
// "Error: " + its text, verbatim. Memory's own checks return one, and so may
// a Store or a policy that wraps one (a quota, a secret filter) when it
// refuses an operation for a reason the model should read. Any other error
// from a store is reported to the model only as an internal error.
type Refusal string

func (r Refusal) Error() string { return string(r) }

func refusef(format string, args ...any) error { return Refusal(fmt.Sprintf(format, args...)) }

// failure turns err into the model's error text: refusals and path errors
// as they are, anything else as a generic internal error, logged in full.
func (m *Memory) failure(ctx context.Context, cmd Command, err error) Result {
	var ref Refusal
	var pe *PathError
	switch {
	case errors.As(err, &ref):
		return errorResult(string(ref))
	case errors.As(err, &pe):
		return errorResult(pe.Reason)
	case errors.Is(err, ErrEscapes):
		return errorResult("Path would escape " + Root + " directory via symlink")
	case errors.Is(err, ErrBusy):
		return errorResult(fmt.Sprintf("The memory store is busy (another process holds it); the %s command on %s changed nothing. Try again", cmd.Name(), cmd.Target()))
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return errorResult(fmt.Sprintf("The %s command on %s was cancelled; nothing was changed", cmd.Name(), cmd.Target()))
	case errors.Is(err, ErrNoSpace):
		return errorResult(fmt.Sprintf("No space left in the memory store; the %s command on %s changed nothing. Deleting files frees space", cmd.Name(), cmd.Target()))
	case errors.Is(err, ErrReadOnly):
		return errorResult(fmt.Sprintf("The memory store is read-only; the %s command on %s changed nothing", cmd.Name(), cmd.Target()))
	}
	m.opts.Logger.ErrorContext(ctx, "memtool: store failure", "command", cmd.Name(), "path", cmd.Target(), "err", err)
	return errorResult(fmt.Sprintf("Internal error while running %s on %s", cmd.Name(), cmd.Target()))
}

func ok(text string) (Result, error) { return Result{Text: text}, nil }

// lock takes m.writes as cmd needs it and returns its unlock: alone for a
// rename or delete that will run a fallback, shared for any other change,
// not at all for a view. So within one Memory no write lands in a tree
// while a fallback copies or removes it, nor between its steps.
func (m *Memory) lock(cmd Command) (unlock func()) {
	_, renamer := m.store.(Renamer)
	_, remover := m.store.(RemoveAller)
	switch cmd.(type) {
	case *View:
		return func() {}
	case *Rename:
		if !renamer {
			m.writes.Lock()
			return m.writes.Unlock
		}
	case *Delete:
		if !remover {
			m.writes.Lock()
			return m.writes.Unlock
		}
	}
	m.writes.RLock()
	return m.writes.RUnlock
}

// ---- view ----

func (m *Memory) view(ctx context.Context, c *View) (Result, error) {
	name, wantDir, err := CleanPath(c.Path)
	if err != nil {
		return Result{}, err
	}
	fi, err := m.store.Stat(ctx, name)
	switch {
	case errors.Is(err, ErrNotExist):
		return Result{}, refusef("The path %s does not exist. Please provide a valid path.", c.Path)
	case err != nil:
		return Result{}, err
	case fi.IsDir():
		return m.listDir(ctx, c.Path, name)
	case !fi.IsRegular():
		return Result{}, refusef("Unsupported file type for %s", c.Path)
	case wantDir:
		return Result{}, refusef("The path %s is not a directory", c.Path)
	}
	if c.ViewRange != nil {
		if err := checkViewRange(*c.ViewRange); err != nil {
			return Result{}, err
		}
	}
	if fi.Size > m.opts.MaxReadSize {
		return Result{}, m.tooLargeToRead(c.Path, fi.Size)
	}
	data, err := m.store.ReadFile(ctx, name, m.opts.MaxReadSize)
	if err != nil {
		return Result{}, m.readError(c.Path, err)
	}
	if mt := imageType(name, data); mt != "" {
		if int64(len(data)) > m.opts.MaxImageSize {
			return Result{}, refusef("Image %s is too large to view: %d bytes, more than the limit of %d bytes", c.Path, len(data), m.opts.MaxImageSize)
		}
		return Result{Image: &Image{MediaType: mt, Data: data}}, nil
	}
	text := decodeLossy(data)
	if n := strings.Count(text, "\n") + 1; n > MaxLines {
		return Result{}, refusef("File %s exceeds maximum line limit of 999,999 lines.", c.Path)
	}
	lines := strings.Split(text, "\n")
	first, shown := 1, lines
	if c.ViewRange != nil {
		first, shown = applyViewRange(lines, *c.ViewRange)
	}
	return ok(m.capFileView(c.Path, lines, shown, first, c.ViewRange))
}

// checkViewRange refuses ranges that select nothing by construction: end
// before start, or a negative end other than -1 (see DEVIATIONS.md, D9).
func checkViewRange(vr [2]int64) error {
	start, end := max(vr[0], 1), vr[1]
	if end == -1 || end >= start {
		return nil
	}
	return refusef("Invalid `view_range` parameter: [%d, %d]. It should be [start_line, end_line] with end_line >= start_line, or end_line = -1 to read to the end of the file", vr[0], vr[1])
}

// applyViewRange returns the 1-based number of the first shown line and the
// shown lines. Start is clamped to 1; a start past the end shows nothing.
func applyViewRange(lines []string, vr [2]int64) (int, []string) {
	n := int64(len(lines))
	start := max(vr[0], 1) - 1
	end := vr[1]
	if end == -1 || end > n {
		end = n
	}
	if start >= end {
		return int(min(start, n)) + 1, nil
	}
	return int(start) + 1, lines[start:end]
}

func (m *Memory) tooLargeToRead(p string, size int64) error {
	return refusef("File %s is too large to read: %d bytes, more than the limit of %d bytes", p, size, m.opts.MaxReadSize)
}

// readError maps a store error for a file that Stat saw a moment ago.
func (m *Memory) readError(p string, err error) error {
	switch {
	case errors.Is(err, ErrNotExist):
		return refusef("The file %s no longer exists (it was deleted or renamed at the same time).", p)
	case errors.Is(err, ErrIsDir), errors.Is(err, ErrIrregular):
		return refusef("The path %s is not a file.", p)
	case errors.Is(err, ErrTooLarge):
		return refusef("File %s is too large to read (the limit is %d bytes)", p, m.opts.MaxReadSize)
	}
	return err
}

// capFileView formats a file view, cut to MaxViewChars with a note (D8).
func (m *Memory) capFileView(p string, all, shown []string, first int, vr *[2]int64) string {
	header := "Here's the content of " + p + " with line numbers:\n"
	var sb strings.Builder
	sb.WriteString(header)
	numberLines(&sb, shown, first)
	out := sb.String()
	if utf8.RuneCountInString(out) <= m.opts.MaxViewChars {
		return out
	}
	// Keep whole lines while they fit with room for the note.
	budget := m.opts.MaxViewChars - utf8.RuneCountInString(header) - 300
	sb.Reset()
	sb.WriteString(header)
	used, k := 0, 0
	for k < len(shown) {
		lineLen := 7 + utf8.RuneCountInString(shown[k])
		if k > 0 {
			lineLen++
		}
		if used+lineLen > budget {
			break
		}
		used += lineLen
		k++
	}
	total := len(all)
	limit := formatCount(m.opts.MaxViewChars)
	if k == 0 {
		// The first line alone is over the budget: cut it.
		line := shown[0]
		keep := budget - 7
		cut := truncateRunes(line, keep)
		numberLines(&sb, []string{cut}, first)
		fmt.Fprintf(&sb, "\n\n[Output cut at %s characters: line %d is %s characters long and only its first %s are shown.",
			limit, first, formatCount(utf8.RuneCountInString(line)), formatCount(utf8.RuneCountInString(cut)))
		if len(shown) > 1 {
			fmt.Fprintf(&sb, " Lines %d to %d of %d are not shown; read them with view_range [%d, %s].]", first+1, first+len(shown)-1, total, first+1, rangeEnd(vr))
		} else {
			sb.WriteString("]")
		}
		return sb.String()
	}
	numberLines(&sb, shown[:k], first)
	last := first + k - 1
	fmt.Fprintf(&sb, "\n\n[Output cut at %s characters: showing lines %d to %d of %d. Read the rest with view_range [%d, %s].]",
		limit, first, last, total, last+1, rangeEnd(vr))
	return sb.String()
}

// capSnippet cuts an edit's snippet (which may hold very long lines) to
// MaxViewChars, with a note.
func (m *Memory) capSnippet(s, p string) string {
	if utf8.RuneCountInString(s) <= m.opts.MaxViewChars {
		return s
	}
	return truncateRunes(s, m.opts.MaxViewChars-200) + fmt.Sprintf("\n\n[Snippet cut at %s characters. View %s to read the edited lines.]", formatCount(m.opts.MaxViewChars), p)
}

// ---- capped error texts ----
//
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
	shown, note := cutOldStr(oldStr, m.room(head, tail))
	return Refusal(head + shown + tail + note)
}

// notUnique refuses an old_str that occurs on several lines of the file at
// p. When both are long, old_str and the lines share the room equally.
func (m *Memory) notUnique(oldStr, p string, lines []int) error {
	head, mid, tail := "No replacement was performed. Multiple occurrences of old_str `", "` in lines: ", ". Please ensure it is unique"
	room := m.room(head, mid, tail)
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

func rangeEnd(vr *[2]int64) string {
	if vr == nil {
		return "-1"
	}
	return strconv.FormatInt(vr[1], 10)
}

func truncateRunes(s string, n int) string {
	if n <= 0 {
		return ""
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}

// imageType returns the media type of an image file: the extension names an
// image type and the bytes really are one. Otherwise "".
func imageType(name string, data []byte) string {
	ext := strings.ToLower(path.Ext(name))
	switch {
	case ext == ".png" && validHeader(png.DecodeConfig, data):
		return "image/png"
	case (ext == ".jpg" || ext == ".jpeg") && validHeader(jpeg.DecodeConfig, data):
		return "image/jpeg"
	case ext == ".gif" && validHeader(gif.DecodeConfig, data):
		return "image/gif"
	case ext == ".webp" && len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		return "image/webp"
	}
	return ""
}

// validHeader reports whether data starts with a well-formed image header
// of a sensible size, as the decoder reads it.
func validHeader(decode func(io.Reader) (image.Config, error), data []byte) bool {
	cfg, err := decode(bytes.NewReader(data))
	return err == nil && cfg.Width > 0 && cfg.Height > 0
}

// listDir lists a directory two levels deep (spec §3.2).
func (m *Memory) listDir(ctx context.Context, p, name string) (Result, error) {
	base := VirtualPath(name) // canonical entry paths (D5)
	var lines []string
	var walk func(dir, prefix string, depth int) error
	walk = func(dir, prefix string, depth int) error {
		entries, err := m.store.ReadDir(ctx, dir)
		if err != nil {
			if depth > 1 && (errors.Is(err, ErrNotExist) || errors.Is(err, ErrNotDir)) {
				return nil // removed while we listed
			}
			if depth > 1 && ctx.Err() == nil {
				// One subdirectory that cannot be read (an I/O error, say)
				// does not hide the rest of the listing.
				m.opts.Logger.WarnContext(ctx, "memtool: listing a subdirectory failed; listed without its entries", "path", prefix, "err", err)
				return nil
			}
			return err
		}
		slices.SortFunc(entries, func(a, b FileInfo) int {
			switch {
			case lessUTF16(a.Name, b.Name):
				return -1
			case lessUTF16(b.Name, a.Name):
				return 1
			}
			return 0
		})
		for _, e := range entries {
			if strings.HasPrefix(e.Name, ".") || e.Name == "node_modules" {
				continue
			}
			switch {
			case e.IsDir():
				lines = append(lines, "4K\t"+prefix+"/"+e.Name+"/")
				if depth < 2 {
					if err := walk(path.Join(dir, e.Name), prefix+"/"+e.Name, depth+1); err != nil {
						return err
					}
				}
			case e.IsRegular():
				lines = append(lines, formatSize(e.Size)+"\t"+prefix+"/"+e.Name)
			}
		}
		return nil
	}
	if err := walk(name, base, 1); err != nil {
		return Result{}, err
	}
	header := "Here're the files and directories up to 2 levels deep in " + p + ", excluding hidden items and node_modules:\n4K\t" + p
	out := header
	if len(lines) > 0 {
		out += "\n" + strings.Join(lines, "\n")
	}
	if utf8.RuneCountInString(out) <= m.opts.MaxViewChars {
		return ok(out)
	}
	budget := m.opts.MaxViewChars - utf8.RuneCountInString(header) - 300
	var sb strings.Builder
	sb.WriteString(header)
	used, k := 0, 0
	for ; k < len(lines); k++ {
		n := 1 + utf8.RuneCountInString(lines[k])
		if used+n > budget {
			break
		}
		used += n
		sb.WriteString("\n" + lines[k])
	}
	fmt.Fprintf(&sb, "\n\n[Listing cut at %s characters: showing the first %d of %d entries, in the order above. View a subdirectory to list it on its own.]",
		formatCount(m.opts.MaxViewChars), k, len(lines))
	return ok(sb.String())
}

// ---- create ----

func (m *Memory) create(ctx context.Context, c *Create) (Result, error) {
	name, wantDir, err := CleanPath(c.Path)
	if err != nil {
		return Result{}, err
	}
	if name == "" {
		return Result{}, refusef("File %s already exists", c.Path)
	}
	if wantDir {
		return Result{}, refusef("Cannot create %s: a file path must not end with '/'", c.Path)
	}
	if err := m.checkWriteSize(int64(len(c.FileText))); err != nil {
		return Result{}, err
	}
	data := []byte(c.FileText)
	done := func() (Result, error) { return ok("File created successfully at: " + c.Path) }

	if m.opts.Overwrite {
		fi, err := m.store.Stat(ctx, name)
		if err == nil {
			if !fi.IsRegular() {
				return Result{}, refusef("File %s already exists", c.Path)
			}
			err := m.store.Update(ctx, name, m.opts.MaxReadSize, func([]byte) ([]byte, error) { return data, nil })
			if err == nil {
				return done()
			}
			if !errors.Is(err, ErrNotExist) {
				return Result{}, m.editError(c.Path, err)
			}
			// Deleted meanwhile: create it below.
		} else if !errors.Is(err, ErrNotExist) {
			return Result{}, err
		}
	}
	// A parent removed by a concurrent command between mkdirAll and the
	// write is created again; a few rounds settle any such race.
	for attempt := 0; ; attempt++ {
		created, err := m.mkdirAll(ctx, c.Path, path.Dir(name))
		if err != nil {
			return Result{}, err
		}
		err = m.store.WriteFile(ctx, name, data, CreateOnly)
		if err == nil {
			return done()
		}
		m.removeCreated(ctx, created)
		switch {
		case errors.Is(err, ErrExist):
			return Result{}, refusef("File %s already exists", c.Path)
		case errors.Is(err, ErrNotExist) && attempt < 3:
			continue
		case errors.Is(err, ErrNotDir):
			return Result{}, refusef("The path %s cannot be created: one of its parents is a file, not a directory", c.Path)
		}
		return Result{}, err
	}
}

func (m *Memory) checkWriteSize(n int64) error {
	if n > m.opts.MaxFileSize {
		return refusef("File content is too large: %d bytes, more than the limit of %d bytes. Nothing was written.", n, m.opts.MaxFileSize)
	}
	return nil
}

// mkdirAll creates dir and its missing parents, returning the directories it
// created, deepest last, so that a failed command can remove them again.
func (m *Memory) mkdirAll(ctx context.Context, p, dir string) ([]string, error) {
	if dir == "." || dir == "" {
		return nil, nil
	}
	var created []string
	parts := strings.Split(dir, "/")
	for i := range parts {
		d := strings.Join(parts[:i+1], "/")
		err := m.store.Mkdir(ctx, d)
		if err == nil {
			created = append(created, d)
			continue
		}
		if errors.Is(err, ErrExist) {
			fi, serr := m.store.Stat(ctx, d)
			if serr == nil && fi.IsDir() {
				continue
			}
			if serr == nil || errors.Is(serr, ErrNotExist) {
				err = ErrNotDir
			} else {
				err = serr
			}
		}
		m.removeCreated(ctx, created)
		if errors.Is(err, ErrNotDir) {
			return nil, refusef("The path %s cannot be created: %s is a file, not a directory", p, VirtualPath(d))
		}
		return nil, err
	}
	return created, nil
}

// removeCreated removes directories that a failed command created, if they
// are still empty (a concurrent command may have put something there).
func (m *Memory) removeCreated(ctx context.Context, created []string) {
	ctx = context.WithoutCancel(ctx)
	for i := len(created) - 1; i >= 0; i-- {
		if err := m.store.Remove(ctx, created[i]); err != nil {
			return
		}
	}
}

// ---- str_replace and insert ----

// editTarget checks the path of an edit and that a regular file is there.
func (m *Memory) editTarget(ctx context.Context, p string) (string, error) {
	name, wantDir, err := CleanPath(p)
	if err != nil {
		return "", err
	}
	if name == "" || wantDir {
		return "", refusef("The path %s is not a file.", p)
	}
	fi, err := m.store.Stat(ctx, name)
	switch {
	case errors.Is(err, ErrNotExist):
		return "", refusef("The path %s does not exist. Please provide a valid path.", p)
	case err != nil:
		return "", err
	case !fi.IsRegular():
		return "", refusef("The path %s is not a file.", p)
	case fi.Size > m.opts.MaxReadSize:
		return "", m.tooLargeToRead(p, fi.Size)
	}
	return name, nil
}

// editError maps a store error from Update.
func (m *Memory) editError(p string, err error) error {
	switch {
	case errors.Is(err, ErrNotExist):
		return refusef("The path %s does not exist. Please provide a valid path.", p)
	case errors.Is(err, ErrIsDir), errors.Is(err, ErrIrregular):
		return refusef("The path %s is not a file.", p)
	case errors.Is(err, ErrTooLarge):
		return refusef("File %s is too large to read (the limit is %d bytes)", p, m.opts.MaxReadSize)
	}
	return err
}

// editable refuses files that an edit would corrupt (D3).
func editable(p string, old []byte) error {
	if !utf8.Valid(old) {
		return refusef("The file %s is not valid UTF-8 text, so it cannot be edited without corrupting it. Nothing was changed.", p)
	}
	return nil
}

func (m *Memory) strReplace(ctx context.Context, c *StrReplace) (Result, error) {
	name, err := m.editTarget(ctx, c.Path)
	if err != nil {
		return Result{}, err
	}
	if c.OldStr == "" {
		return Result{}, refusef("No replacement was performed: `old_str` is empty. Give the exact text to replace.")
	}
	var snippet string
	err = m.store.Update(ctx, name, m.opts.MaxReadSize, func(old []byte) ([]byte, error) {
		if err := editable(c.Path, old); err != nil {
			return nil, err
		}
		text := string(old)
		first := strings.Index(text, c.OldStr)
		if first < 0 {
			return nil, m.notFound(c.OldStr, c.Path)
		}
		if strings.Count(text, c.OldStr) > 1 {
			return nil, m.notUnique(c.OldStr, c.Path, occurrences(text, c.OldStr))
		}
		updated := text[:first] + c.NewStr + text[first+len(c.OldStr):]
		if err := m.checkWriteSize(int64(len(updated))); err != nil {
			return nil, err
		}
		// The snippet runs from two lines before the match to two lines
		// after the last line of new_str (D2).
		startLine := strings.Count(text[:first], "\n") + 1
		lines := strings.Split(updated, "\n")
		from := max(1, startLine-2)
		to := min(len(lines), startLine+2+strings.Count(c.NewStr, "\n"))
		var sb strings.Builder
		sb.WriteString("The memory file has been edited. Here is the snippet showing the change (with line numbers):\n")
		numberLines(&sb, lines[from-1:to], from)
		snippet = m.capSnippet(sb.String(), c.Path)
		return []byte(updated), nil
	})
	if err != nil {
		return Result{}, m.editError(c.Path, err)
	}
	return ok(snippet)
}

// occurrenceLines lists the 1-based lines on which the non-overlapping
// occurrences of sub start, each line once, ascending, joined by ", ".
func occurrenceLines(text, sub string) string {
	return joinLines(occurrences(text, sub))
}

// occurrences returns the 1-based lines on which the non-overlapping
// occurrences of sub start, each line once, ascending.
func occurrences(text, sub string) []int {
	var out []int
	line, pos := 1, 0
	for {
		i := strings.Index(text[pos:], sub)
		if i < 0 {
			return out
		}
		line += strings.Count(text[pos:pos+i], "\n")
		if len(out) == 0 || out[len(out)-1] != line {
			out = append(out, line)
		}
		line += strings.Count(sub, "\n")
		pos += i + len(sub)
	}
}

func joinLines(lines []int) string {
	var sb strings.Builder
	for i, n := range lines {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(strconv.Itoa(n))
	}
	return sb.String()
}

func (m *Memory) insert(ctx context.Context, c *Insert) (Result, error) {
	name, err := m.editTarget(ctx, c.Path)
	if err != nil {
		return Result{}, err
	}
	err = m.store.Update(ctx, name, m.opts.MaxReadSize, func(old []byte) ([]byte, error) {
		if err := editable(c.Path, old); err != nil {
			return nil, err
		}
		lines := strings.Split(string(old), "\n")
		if c.InsertLine < 0 || c.InsertLine > int64(len(lines)) {
			return nil, refusef("Invalid `insert_line` parameter: %d. It should be within the range of lines of the file: [0, %d]", c.InsertLine, len(lines))
		}
		n := int(c.InsertLine)
		text := strings.TrimSuffix(c.InsertText, "\n")
		updated := strings.Join(slices.Concat(lines[:n], []string{text}, lines[n:]), "\n")
		if err := m.checkWriteSize(int64(len(updated))); err != nil {
			return nil, err
		}
		return []byte(updated), nil
	})
	if err != nil {
		return Result{}, m.editError(c.Path, err)
	}
	return ok("The file " + c.Path + " has been edited.")
}

// ---- delete ----

func (m *Memory) delete(ctx context.Context, c *Delete) (Result, error) {
	name, wantDir, err := CleanPath(c.Path)
	if err != nil {
		return Result{}, err
	}
	if name == "" {
		return Result{}, refusef("Cannot delete the %s directory itself", Root)
	}
	fi, err := m.store.Stat(ctx, name)
	switch {
	case errors.Is(err, ErrNotExist):
		return Result{}, refusef("The path %s does not exist", c.Path)
	case err != nil:
		return Result{}, err
	case wantDir && !fi.IsDir():
		return Result{}, refusef("The path %s is not a directory", c.Path)
	}
	if fi.IsDir() {
		err = m.removeAll(ctx, name)
	} else {
		err = m.store.Remove(ctx, name)
	}
	if errors.Is(err, ErrNotExist) {
		return Result{}, refusef("The path %s does not exist", c.Path)
	}
	if err != nil {
		return Result{}, err
	}
	return ok("Successfully deleted " + c.Path)
}

func (m *Memory) removeAll(ctx context.Context, name string) error {
	if ra, ok := m.store.(RemoveAller); ok {
		return ra.RemoveAll(ctx, name)
	}
	// The fallback; the caller holds m.writes alone (see lock).
	return removeTree(ctx, m.store, name)
}

// removeTree removes name and everything below it, deepest first.
func removeTree(ctx context.Context, s Store, name string) error {
	fi, err := s.Stat(ctx, name)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		entries, err := s.ReadDir(ctx, name)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if err := removeTree(ctx, s, path.Join(name, e.Name)); err != nil && !errors.Is(err, ErrNotExist) {
				return err
			}
		}
	}
	return s.Remove(ctx, name)
}

// ---- rename ----

func (m *Memory) rename(ctx context.Context, c *Rename) (Result, error) {
	oldName, oldDir, err := CleanPath(c.OldPath)
	if err != nil {
		return Result{}, err
	}
	newName, newDir, err := CleanPath(c.NewPath)
	if err != nil {
		return Result{}, err
	}
	if oldName == "" {
		return Result{}, refusef("Cannot rename the %s directory itself", Root)
	}
	if newName == "" {
		return Result{}, refusef("The destination %s already exists", c.NewPath)
	}
	fi, err := m.store.Stat(ctx, oldName)
	switch {
	case errors.Is(err, ErrNotExist):
		return Result{}, refusef("The path %s does not exist", c.OldPath)
	case err != nil:
		return Result{}, err
	case (oldDir || newDir) && !fi.IsDir():
		return Result{}, refusef("Cannot rename %s to %s: a path ending in '/' names a directory, and %s is a file", c.OldPath, c.NewPath, c.OldPath)
	}
	if _, err := m.store.Stat(ctx, newName); err == nil {
		return Result{}, refusef("The destination %s already exists", c.NewPath)
	} else if !errors.Is(err, ErrNotExist) {
		return Result{}, err
	}
	if fi.IsDir() && strings.HasPrefix(newName, oldName+"/") {
		return Result{}, refusef("Cannot move the directory %s into itself (%s). Nothing was changed.", c.OldPath, c.NewPath)
	}
	created, err := m.mkdirAll(ctx, c.NewPath, path.Dir(newName))
	if err != nil {
		return Result{}, err
	}
	err = m.move(ctx, oldName, newName)
	if err != nil {
		m.removeCreated(ctx, created)
		switch {
		case errors.Is(err, ErrExist):
			return Result{}, refusef("The destination %s already exists", c.NewPath)
		case errors.Is(err, ErrNotExist):
			return Result{}, refusef("The path %s does not exist", c.OldPath)
		}
		return Result{}, err
	}
	return ok("Successfully renamed " + c.OldPath + " to " + c.NewPath)
}

// move renames with the store's Renamer, or else with the fallback: copy
// the tree entry by entry, then remove the entries copied. The caller holds
// m.writes alone (see lock), so no other change through this Memory runs
// meanwhile (a view may see both trees). The fallback never removes what
// it did not make or copy: if the copy fails, it removes only the entries
// it created, deepest first; after the copy, only the source entries it
// copied, so that an entry another process put into either tree meanwhile
// stays, with the directories that hold it. Across processes it is not
// atomic: another process may see both trees or part of one, and its
// change to a file already copied is lost when that file is removed. A
// crash, or a store failure while removing, leaves the new tree and what
// remains of the old one.
func (m *Memory) move(ctx context.Context, oldName, newName string) error {
	if r, ok := m.store.(Renamer); ok {
		return r.Rename(ctx, oldName, newName)
	}
	var copied []string // the source names, parents first
	err := copyTree(ctx, m.store, oldName, newName, m.opts.MaxReadSize, &copied)
	ctx = context.WithoutCancel(ctx) // from here on, finish what was begun
	if err != nil {
		for i := len(copied) - 1; i >= 0; i-- {
			m.store.Remove(ctx, newName+strings.TrimPrefix(copied[i], oldName))
		}
		return err
	}
	for i := len(copied) - 1; i >= 0; i-- {
		err := m.store.Remove(ctx, copied[i])
		if err != nil && !errors.Is(err, ErrNotExist) && !errors.Is(err, ErrNotEmpty) {
			return err
		}
	}
	return nil
}

// copyTree copies the file or directory src to dst, which must not exist,
// and appends to copied each source entry whose copy it created.
func copyTree(ctx context.Context, s Store, src, dst string, limit int64, copied *[]string) error {
	fi, err := s.Stat(ctx, src)
	if err != nil {
		return err
	}
	switch {
	case fi.IsDir():
		if err := s.Mkdir(ctx, dst); err != nil {
			return err
		}
		*copied = append(*copied, src)
		entries, err := s.ReadDir(ctx, src)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if err := copyTree(ctx, s, path.Join(src, e.Name), path.Join(dst, e.Name), limit, copied); err != nil {
				return err
			}
		}
		return nil
	case fi.IsRegular():
		data, err := s.ReadFile(ctx, src, limit)
		if err != nil {
			return err
		}
		if err := s.WriteFile(ctx, dst, data, CreateOnly); err != nil {
			return err
		}
		*copied = append(*copied, src)
		return nil
	}
	return fmt.Errorf("copy %s: %w", src, fs.ErrInvalid)
}
