// Package storetest is the conformance suite of memtool.Store: every
// backend, and every wrapper around one, runs it from a few lines of its own
// tests.
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) memtool.Store {
//			return mystore.New(…)
//		})
//	}
//
// # What it checks
//
// The suite checks the doc comments of memtool.Store, memtool.Renamer and
// memtool.RemoveAller sentence by sentence, through the store's own methods
// only: the root always exists; missing names, and names under a file, are
// memtool.ErrNotExist; each method returns the error class its contract
// names, checked with errors.Is; a method that fails changes nothing (the
// whole tree is compared before and after); Update returns fn's error
// unchanged and never loses an update when many goroutines append at once;
// of concurrent creates, mkdirs or no-replace renames onto one name exactly
// one wins; a reader sees a file's old or new content, never a mix; and a
// context that is already cancelled makes every method fail with
// context.Canceled without changing anything.
//
// Renamer and RemoveAller are optional: their subtests are skipped for a
// store that does not have them (memtool.Has).
//
// RunWrapper checks a policy wrapper (a memtool.Wrapper) over a store with
// every capability and over one with none (Bare): the conformance suite
// both ways; capabilities forwarded, or answered with
// errors.ErrUnsupported changing nothing, and memtool.Move and RemoveAll
// then falling back; the tenant suite through the wrapper, whose tenants'
// stores are wrapped in the same policy; and the wrapper's own refusals
// (a list the caller gives), each of which must fail and change nothing,
// on the wrapper and on a tenant of it. A wrapper's test is one call:
//
//	func TestWrapper(t *testing.T) {
//		storetest.RunWrapper(t, newFileStore, func(t *testing.T, inner memtool.Store) memtool.Store {
//			return mypolicy.New(inner, nil)
//		}, refusals)
//	}
//
// RunTenants checks a multi-tenant store (memtool.Tenanted, and
// memtool.TenantLister when it has it): tenants are isolated from each
// other, invalid ids name no tenant, a store is single- or multi-tenant for
// good, the tenant list, and then the whole suite on one tenant beside a
// neighbour that holds files of the same names, which each subtest must
// leave as they were.
//
// # What it does not check
//
// What needs more than the interface to set up is left to the backend's own
// tests: irregular entries (FIFOs, hard links) and ErrIrregular, symbolic
// links and ErrEscapes, durability across a crash, file modes, and sharing a
// store between processes.
//
// # The store under test
//
// newStore is called once per subtest and must return a new, empty store
// (the root exists and has no entries). It may register cleanup with
// t.Cleanup. Subtests run one after another; each uses only its own store.
package storetest
