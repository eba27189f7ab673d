package secretscan

import "testing"

// TestScanFindsCardAfterOtherNumbers: a card number written after another
// number and a blank (an order number, a count, a phone number) is a card
// number all the same: it was missed, because the run of digit groups was
// tried only from its first group.
func TestScanFindsCardAfterOtherNumbers(t *testing.T) {
	for _, text := range []string{
		"Order 58213 4111 1111 1111 1111 exp 12/27",
		"Account 1234 4111111111111111",
		"qty 1 4111 1111 1111 1111",
		"call 555 1234 5500-0000-0000-0004 now",
	} {
		f := Scan([]byte(text))
		if len(f) != 1 || f[0].Kind != "a payment card number" {
			t.Errorf("%q: found %+v, want one payment card number", text, f)
		}
	}
}
