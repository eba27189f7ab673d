package storeurl_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtool/memtool/internal/backendtest"
	"github.com/memtool/memtool/pgstore/pgtest"
	"github.com/memtool/memtool/storeurl"
)

const password = "s3cr3t-Pa55/w0rd"

// withPassword puts password into the userinfo and the sslpassword of a
// postgres URL.
func withPassword(t *testing.T, raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), password)
	q := u.Query()
	q.Set("sslpassword", password)
	u.RawQuery = q.Encode()
	return u.String()
}

// TestConnectionErrorsSayWhatToFix opens real targets that fail, each in
// its own way, and checks that the error says what to fix, and shows no
// secret of the URL.
func TestConnectionErrorsSayWhatToFix(t *testing.T) {
	pg, err := url.Parse(pgtest.URL(t)) // the server, with trust authentication
	if err != nil {
		t.Fatal(err)
	}
	pgWith := func(change func(u *url.URL, q url.Values)) string {
		u := *pg
		q := u.Query()
		change(&u, q)
		u.RawQuery = q.Encode()
		return withPassword(t, u.String())
	}
	// An S3 endpoint that answers as S3 does when the URL's region is
	// not the bucket's.
	moved := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		w.Header().Set("X-Amz-Bucket-Region", "eu-west-1")
		w.WriteHeader(http.StatusMovedPermanently)
		fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>PermanentRedirect</Code><Message>The bucket you are attempting to access must be addressed using the specified endpoint.</Message><Bucket>memories</Bucket></Error>`)
	}))
	defer moved.Close()
	fake, err := url.Parse(backendtest.S3URL(t, "p")) // sets its credentials
	if err != nil {
		t.Fatal(err)
	}
	s3 := func(bucket, endpoint string) string {
		return fmt.Sprintf("s3://%s?region=us-east-1&endpoint=%s&use_path_style=true", bucket, endpoint)
	}
	endpoint := fake.Query().Get("endpoint")

	for _, c := range []struct {
		name, url, want string
		env             []string
	}{
		{"closed port", withPassword(t, "postgres://memtool@127.0.0.1:1/nodb?connect_timeout=5"), "check the host and port in the URL", nil},
		{"no database", pgWith(func(u *url.URL, q url.Values) { u.Path = "/memtool_no_such_db" }), "the database does not exist", nil},
		{"no role", pgWith(func(u *url.URL, q url.Values) { u.User = url.User("memtool_no_such_role") }), "check the user and password", nil},
		{"no schema", pgWith(func(u *url.URL, q url.Values) { q.Set("search_path", "memtool_no_such_schema") }), "fix search_path", nil},
		{"unknown host", withPassword(t, "postgres://memtool@memtool.invalid/db?connect_timeout=5"), "check the host in the URL", nil},
		{"s3 closed port", s3("memories", "http://127.0.0.1:1"), "check the host and port in the URL (or its endpoint=)", nil},
		{"s3 wrong region", s3("memories", moved.URL), "set region=eu-west-1", nil},
		{"s3 no bucket", s3("nobucket", endpoint), "no such bucket", nil},
		{"s3 no region", "s3://memories", "set region= in the URL", []string{"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE", "AWS_CONFIG_FILE=" + filepath.Join(t.TempDir(), "none")}},
		{"s3 no credentials", s3("memories", endpoint), "check the credentials (AWS_ACCESS_KEY_ID", []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, v := range c.env {
				name, value, _ := strings.Cut(v, "=")
				t.Setenv(name, value)
			}
			_, closer, err := storeurl.Open(t.Context(), c.url, nil)
			if err == nil {
				closer.Close()
				t.Fatalf("Open(%q) worked", c.url)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("Open: %v\nwant it to say %q", err, c.want)
			}
			for _, secret := range []string{password, url.PathEscape(password), url.QueryEscape(password)} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("the error shows the password %q: %v", secret, err)
				}
			}
		})
	}
}

// TestRedact: the forms of secrets Redact masks, and what it leaves.
func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u:pw@h/db":                                           "postgres://u:xxxxx@h/db",
		"postgres://u:p@ss@h/db?x=1":                                     "postgres://u:xxxxx@h/db?x=1",
		`store URL "postgresql://u:p%2Fw@h:5432/db"`:                     `store URL "postgresql://u:xxxxx@h:5432/db"`,
		"postgres://h/db?sslpassword=abc&sslmode=x":                      "postgres://h/db?sslpassword=xxxxx&sslmode=x",
		"host=h password='a b' user=u":                                   "host=h password=xxxxx user=u",
		"s3://b?region=r&AWSAccessKeyId=AK&X-Amz-Signature=00ff&token=t": "s3://b?region=r&AWSAccessKeyId=xxxxx&X-Amz-Signature=xxxxx&token=xxxxx",
		"azblob://c?sas=sv%3D1&secret_key=k":                             "azblob://c?sas=xxxxx&secret_key=xxxxx",
		"postgres://user@host/db and http://h:80/p@x":                    "postgres://user@host/db and http://h:80/p@x",
		"copied 3 files from /a to sqlite:///b.db":                       "copied 3 files from /a to sqlite:///b.db",
	} {
		if got := storeurl.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
	// The secrets of a given URL are masked wherever they occur.
	if got := storeurl.Redact("auth failed for password s3cret/x (s3cret%2Fx)", "postgres://u:s3cret%2Fx@h/db"); strings.Contains(got, "s3cret") {
		t.Errorf("a known secret outside a URL: %q", got)
	}
}

// TestErrorsAreRedacted: an error of opening a store quotes its URL with
// the password masked.
func TestErrorsAreRedacted(t *testing.T) {
	raw := "sqlite://memtool:" + url.PathEscape(password) + "@host/m.db?sslpassword=" + url.QueryEscape(password)
	_, _, err := storeurl.Open(t.Context(), raw, nil)
	if err == nil || strings.Contains(err.Error(), "Pa55") || !strings.Contains(err.Error(), storeurl.Masked) {
		t.Errorf("Open: %v; want the URL quoted with its secrets masked", err)
	}
}

// A password holding an unescaped '@' is masked whole in Open's error,
// also where the driver split the URL at the first '@' and quotes the
// password's tail as part of the host ("lookup PW@127.0.0.1").
func TestPasswordWithAtMasked(t *testing.T) {
	const url = "postgres://bob:s3cret@Pw9@127.0.0.1:1/db?connect_timeout=2"
	_, _, err := storeurl.Open(t.Context(), url, nil)
	if err == nil {
		t.Fatal("Open succeeded")
	}
	for _, part := range []string{"s3cret", "Pw9"} {
		if strings.Contains(err.Error(), part) {
			t.Errorf("Open's error shows %q of the password: %v", part, err)
		}
	}
}
