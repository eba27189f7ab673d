package memtool

import "context"

// A Resolver is a store in which two names can lead to one entry, as the
// symbolic links in a directory store do. ResolveName returns the name of
// the entry that name leads to, with every link on the way followed: the
// part from the first component that does not exist on is kept as given,
// and a name it cannot resolve (a link that leads out of the store or
// round in a loop, an error) comes back as given. It changes nothing and
// promises nothing about later calls: the entries may change meanwhile.
//
// A turn of tool calls resolves the paths of its calls before it runs
// them, so that calls whose paths lead to one entry, or one into
// another's directory, run in the order the model wrote them (see
// ResolveName below).
type Resolver interface {
	ResolveName(ctx context.Context, name string) string
}

// ResolveName resolves name in s, or in the store at the end of s's chain
// of wrappers (see Wrapper), if that is a Resolver; otherwise it returns
// name. A wrapper is not asked: the policies keep every name as it is, so
// the store under them resolves it as they would. A caller that orders
// by what it returns should keep the name as given too, so that a wrapper
// that did change names would cost order, not lose it.
func ResolveName(ctx context.Context, s Store, name string) string {
	if r := resolverOf(s); r != nil {
		return r.ResolveName(ctx, name)
	}
	return name
}

// HasResolver reports whether ResolveName asks a Resolver for s: whether
// two names may lead to one entry there (through a link in a directory
// store), and a rename of a link may change where a name leads.
func HasResolver(s Store) bool { return resolverOf(s) != nil }
