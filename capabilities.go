package memtool

import "context"

// WithCapabilitiesOf returns s extended with exactly the optional
// capabilities that inner has: Renamer, carried out by rename, and
// RemoveAller, carried out by removeAll. A policy that wraps inner uses it
// to forward those capabilities, no more and no less: offering Rename over
// a store without an atomic rename would promise what the store cannot keep.
func WithCapabilitiesOf(inner, s Store, rename func(ctx context.Context, oldname, newname string) error, removeAll func(ctx context.Context, name string) error) Store {
	_, rn := inner.(Renamer)
	_, ra := inner.(RemoveAller)
	switch {
	case rn && ra:
		return renamerRemoveAller{s, rename, removeAll}
	case rn:
		return renamer{s, rename}
	case ra:
		return removeAller{s, removeAll}
	}
	return s
}

// The store variants with one or both optional capabilities. Each forwards
// the Store methods to the wrapped store as they are.
type (
	renamer struct {
		Store
		rename func(ctx context.Context, oldname, newname string) error
	}
	removeAller struct {
		Store
		removeAll func(ctx context.Context, name string) error
	}
	renamerRemoveAller struct {
		Store
		rename    func(ctx context.Context, oldname, newname string) error
		removeAll func(ctx context.Context, name string) error
	}
)

func (s renamer) Rename(ctx context.Context, o, n string) error { return s.rename(ctx, o, n) }

func (s removeAller) RemoveAll(ctx context.Context, name string) error { return s.removeAll(ctx, name) }

func (s renamerRemoveAller) Rename(ctx context.Context, o, n string) error {
	return s.rename(ctx, o, n)
}

func (s renamerRemoveAller) RemoveAll(ctx context.Context, name string) error {
	return s.removeAll(ctx, name)
}
