// Package must stops a test at the first error of a step the test only
// prepares, where the step's failure is not what the test checks.
package must

import "testing"

// Succeed fails t at once if err is not nil.
func Succeed(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
