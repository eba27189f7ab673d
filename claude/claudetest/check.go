package claudetest

import "testing"

// JSONEqual is SameJSON for a test: it reports whether got holds the same
// value as want, and stops t when either is not JSON.
func JSONEqual(t testing.TB, got []byte, want string) bool {
	t.Helper()
	same, err := SameJSON(got, []byte(want))
	if err != nil {
		t.Fatal(err)
	}
	return same
}

// CheckRefusals fails t, and lets it go on, when the server refused any
// request (see Refusals).
func (s *Server) CheckRefusals(t testing.TB) {
	t.Helper()
	if err := s.Refusals(); err != nil {
		t.Errorf("the fake refused requests:\n%v", err)
	}
}
