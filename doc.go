// Package memtool runs Claude's memory tool (memory_20250818) against storage
// the application owns: the six commands view, create, str_replace, insert,
// delete and rename on files under a virtual /memories directory, with the
// answers the model expects, byte for byte.
//
// This package is the portable core and imports only the standard library.
// Backends (memstore, filestore, sqlitestore, pgstore, objectstore) and
// policies that wrap any backend (limits, secrets, audit, encrypt, expiry,
// history) live in packages of their own; package claude connects it to the
// Anthropic Go SDK; cmd/memtool is the command-line tool.
//
//	store, err := filestore.Open("./memories", nil)
//	…
//	mem := memtool.New(store, nil)
//	res := mem.Run(ctx, toolUse.Input) // res.Text, res.IsError, res.Image
//
// # The pipeline
//
// Data flows one way, and each step has one home:
//
//  1. ParseCommand turns the JSON input of one tool_use block into a
//     Command (*View, *Create, *StrReplace, *Insert, *Delete, *Rename). It is
//     strict: unknown commands, missing or mistyped parameters, duplicate
//     keys, keys that differ from a parameter only by case and trailing data
//     are an *InputError.
//  2. CleanPath, the path gate, turns a virtual path into the clean relative
//     name a Store sees ("" for the root), or a *PathError. It is pure and
//     fuzzed: traversal, escapes, control and look-alike characters, reserved
//     names and the stores' own names never get past it.
//  3. Memory executes the command: it alone writes text the model reads, and
//     it writes it once, for every backend, so every backend answers alike.
//  4. A Store keeps bytes and directories. Its interface is seven methods;
//     Renamer, RemoveAller, DirLister and NameLister (a listing that
//     reads a directory once, and without a look at each entry when it is
//     large) and FileOpener (a file read as a stream) are optional
//     capabilities with fallbacks, and
//     Tenanted gives one isolated Store per tenant (TenantLister lists
//     them). A policy that wraps a store is a Wrapper: it implements every
//     capability, embedding a Forwarder, and answers errors.ErrUnsupported
//     where the store it wraps lacks one; callers then fall back, and Has
//     tells in advance.
//
// Beside the capabilities, as fs.ReadFile sits beside ReadFileFS, the tree
// helpers Walk, MkdirAll, RemoveAll, Copy and Move work over any Store,
// using Renamer and RemoveAller when present. Memory's fallbacks are these
// helpers, and the policies use them too, so a tree is walked, made,
// removed and moved with one set of rules: a file in the way of MkdirAll
// is ErrNotDir, entries that vanish meanwhile are skipped, and a failed
// step removes only what it made.
//
// Memory.Run does steps 1 to 4; Memory.Execute starts at step 2 with a
// Command you built.
//
// # Search
//
// Memory.Search (and Search, on any Store) finds the lines of a memory
// that hold a literal text or match an RE2 regular expression, as grep -rn
// does, seeing what view sees: no hidden entries, no images or binary
// files. A store that keeps an index of its files' text (Searcher:
// sqlitestore, pgstore) names the files to read; any other is scanned, a
// few files at a time. Both give the same lines.
//
// # What the model reads
//
// A Result is a command's answer: text, or an image block for an image
// file, with IsError set on failure. A failed command is a Result, never a
// Go error, and it changed nothing, unless its text says it may have (the
// store's answer to the change was lost: ErrOutcomeUnknown) or did so in
// part (a store without Renamer or RemoveAller failed part way through the
// entry-by-entry rename or delete of a directory, which Move and RemoveAll
// then report). Its text starts with "Error: " and is one
// of: memtool's own messages (the contract's texts, see DEVIATIONS.md for
// where they differ from the TypeScript SDK's handler); the text of a
// Refusal, which a policy or store returns to tell the model why it refused
// (a quota, a secret, a file that does not decrypt); a *PathError's reason;
// or, for an unexpected store failure, "Internal error while running
// <command> on <path>", with the detail logged for the operator and never
// shown to the model. A full store (ErrNoSpace), a read-only one
// (ErrReadOnly), a busy one (ErrBusy) and a cancelled command are named
// plainly, without host details. Views and error texts are cut at
// Options.MaxViewChars characters with a note that says what was cut.
//
// # Concurrency and durability
//
// Memory is safe for concurrent use: the SDK tool runners run one turn's
// calls in parallel goroutines. Every Store method is atomic and
// linearizable, also across processes sharing the store, and a method that
// returns nil has made its change durable; edits are one Store.Update, a
// read-modify-write the store serialises, so no update is lost. Of two
// concurrent creates or renames onto one name exactly one wins. The
// fallbacks Memory uses when a store lacks Renamer or RemoveAller are
// serialised within the process only; see Renamer. A rename of a
// directory to a longer or deeper name is refused if an entry it moves
// would pass MaxPathBytes or MaxDepth; from that check to its move it keeps
// every other change through the Memory out (one from another process may
// still land in the tree meanwhile and be moved unchecked).
//
// # Errors
//
// Stores report the sentinels in errors.go (ErrNotExist, ErrExist,
// ErrNotDir, ErrIsDir, ErrIrregular, ErrEscapes, ErrTooLarge, ErrNotEmpty,
// ErrNoSpace, ErrReadOnly, ErrBusy), wrapped with the operation and name and
// checked with errors.Is.
//
// The package's tests replay the TypeScript SDK's recorded answers (the
// reference battery), golden transcripts and a hostile-input corpus, and
// package storetest checks any Store against the contract in store.go.
package memtool

//go:generate sh -c "go run ./internal/gentables > pathtables.go.tmp && mv pathtables.go.tmp pathtables.go"
