//go:build !gcs && !azure

package objectstore

import (
	"context"
	"net/url"
)

// openBlobURL is never called in a build without gcs and azure: Open
// refuses their URLs first (NotBuilt).
func openBlobURL(ctx context.Context, u *url.URL) (objects, error) {
	return nil, NotBuilt(u.Scheme)
}
