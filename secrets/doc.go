// Package secrets wraps a memtool.Store so that credentials are not written
// into memory: before every write it scans the whole file the write would
// leave (for an edit, the edited file, not just the new text, so a secret
// assembled over several edits is caught) and rejects or redacts it.
//
//	store := secrets.New(inner, nil)                                    // reject
//	store := secrets.New(inner, &secrets.Options{Policy: secrets.Redact}) // redact
//
// # What it finds
//
// Scan's own rules, each a literal anchor confirmed by an anchored regular
// expression (RE2, linear time):
//
//   - AWS access key IDs (AKIA…, ASIA…, ABIA…, ACCA…, A3T…) and secret
//     access keys next to their key name, in any case
//     (aws_secret_access_key = …, AWS_SECRET_ACCESS_KEY=…,
//     secretAccessKey: …);
//   - Anthropic keys (sk-ant-api03-…, sk-ant-admin01-…), OpenAI keys
//     (sk-proj-…, sk-svcacct-…, sk-admin-…, sk-None-…, and the older sk-…
//     form, all with the T3BlbkFJ marker);
//   - GitHub tokens (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_), GitLab
//     tokens (glpat-, gldt-, glrt-, glptt-), Slack tokens (xoxb-, xoxp-, …,
//     and the rotating xoxe.xoxp-1-… and xoxe-1-…)
//     and webhook URLs, Stripe keys (sk_live_, sk_test_, rk_live_, …),
//     Google API keys (AIza…);
//   - private key blocks (-----BEGIN … PRIVATE KEY-----; the header alone is
//     enough), JSON Web Tokens (eyJ….eyJ….…, found and redacted whole
//     however long their header or any part);
//   - passwords in URLs (scheme://user:password@host; a password of only
//     asterisks is taken as already masked);
//   - payment card numbers: 13 to 19 digits, optionally grouped by spaces or
//     dashes, with a card network's prefix and length, passing the Luhn
//     check.
//
// Fixed-length tokens must stand alone (not inside a longer word), so that
// near misses such as a 35-character ghp_ string, a timestamp or a phone
// number pass. Names are scanned too: a path that holds a secret is refused
// under either policy, for an edit as for a write (whether the file
// exists or not: the stores below may keep the name of an edit that finds
// none, as package expiry does in its index).
//
// There is no allow marker: nothing the model can write into a file turns
// the scan off.
//
// # Policies
//
// Reject (the default) refuses the write with an *Error and changes
// nothing. The message names the kind of secret and its line, never the
// secret:
//
//	Refused: /memories/a.md would contain what looks like a GitHub token on line 2. Do not store credentials in memory; nothing was changed.
//
// memtool.Memory shows that text to the model (an *Error unwraps to a
// memtool.Refusal).
//
// Redact writes the file with each secret replaced by "[REDACTED <kind>]"
// (a private key from its BEGIN line to its END line). The command's
// answer is Memory's usual one; a str_replace snippet shows the text as the
// model sent it, which the model had anyway. The file written holds nothing
// the scan finds: cutting one secret out can make its neighbour one (a
// token glued to a key stands alone once the key is gone), so the result
// is scanned and redacted again until nothing is left. Redact refuses, as
// Reject does, a file it cannot redact safely: one with a private key
// header that no END line closes (redacting to the end would cut lines the
// write never touched; keeping the lines after it may keep the key's
// body), saying so, one whose redaction does not settle within a bound
// (a long chain of glued tokens), and one within Options.MaxFileSize
// (default memtool.DefaultMaxFileSize, the largest file a command may
// write) that redaction would take over it: a placeholder may be longer
// than its secret, and a file of short card numbers would otherwise grow
// to twice the size any command may write.
//
// # Limits
//
// Rules find known formats; a secret without a recognisable format (a
// plain password in prose, a key split over two lines) passes. Files are
// scanned as bytes; a secret written in an encoding (base64, hex) passes.
//
// # Capabilities and cost
//
// The store New returns is a memtool.Wrapper: it forwards the inner
// store's optional capabilities (Renamer, RemoveAller, Tenanted,
// TenantLister), answering errors.ErrUnsupported for those the inner store
// lacks, and Tenant returns the inner tenant's store under the same policy.
// A rename checks the new path of every entry it moves (a secret may span
// the components of a path), and reads no file; from its check to its
// move it keeps out the entries, and the renames, that the wrapper (and
// the other stores Tenant returns for its tenant) would make in the tree.
// An entry another process makes in the tree meanwhile is moved unchecked.
// Reads are not scanned. Writes and edits scan the content they write, in
// time proportional to its size. To measure Scan and a str_replace in a
// 4 KiB file through Memory on memstore:
//
//	go test -run '^$' -bench . ./secrets
package secrets
