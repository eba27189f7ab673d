package encrypt_test

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/memtool/memtool/encrypt"
)

// A key printed by mistake does not give its secret away: %v, %s, %#v,
// of the key, of a slice of keys, of a struct holding one, or a log line;
// Text is the one form that holds it.
func TestKeyPrintsNoSecret(t *testing.T) {
	k := newKey(t, "k1")
	secret := strings.TrimPrefix(k.Text(), "k1:")
	var log strings.Builder
	slog.New(slog.NewTextHandler(&log, nil)).Info("opened", "key", k, "keys", []encrypt.Key{k})
	holder := struct{ Key encrypt.Key }{k}
	for _, got := range []string{
		fmt.Sprintf("%v", k), fmt.Sprintf("%s", k), fmt.Sprintf("%#v", k), fmt.Sprintf("%+v", k),
		fmt.Sprint([]encrypt.Key{k}), fmt.Sprintf("%#v", []encrypt.Key{k}), fmt.Sprintf("%+v", holder), fmt.Sprintf("%#v", holder),
		log.String(),
	} {
		if strings.Contains(got, secret) || !strings.Contains(got, "k1") {
			t.Errorf("printed as %q", got)
		}
	}
	if keys, err := encrypt.ParseKeys(k.Text()); err != nil || keys[0] != k {
		t.Errorf("ParseKeys(Text) = %v, %v", keys, err)
	}
}

// A key that does not parse is not repeated in the error, whichever way
// it is wrong: written the wrong way round (base64:ID), its secret stands
// where the ID goes. And no verb of fmt prints a Key's secret.
func TestBadKeyErrorHidesSecret(t *testing.T) {
	k := newKey(t, "k1")
	secret := strings.TrimPrefix(k.Text(), "k1:")
	for _, text := range []string{
		secret + ":k1",
		strings.ReplaceAll(secret, "=", "") + ":k1",
		"k1:" + secret[:20],
	} {
		_, err := encrypt.ParseKeys(text)
		if err == nil {
			t.Fatalf("ParseKeys(%q) accepted it", text)
		}
		for _, part := range []string{secret, secret[:20]} {
			if strings.Contains(err.Error(), part) {
				t.Errorf("ParseKeys error repeats the key: %v", err)
			}
		}
	}
	for _, verb := range []string{"%d", "%x", "%X", "%q", "%v", "%08b"} {
		if got := fmt.Sprintf(verb, k); got != "k1:[secret]" {
			t.Errorf("Sprintf(%q, key) = %q", verb, got)
		}
	}
}
