// Package stacktest holds tests of the policy wrappers combined: the full
// stack as cmd/memtool builds it (audit, secrets, limits, history,
// expiry, encrypt, the store), and pairs of them, under concurrency and
// with the management operations (expiry.Collect and Restore,
// history.Revert, encrypt.Rekey) running beside ordinary commands. It has
// no code of its own.
package stacktest
