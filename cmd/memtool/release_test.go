package main

import (
	"os"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v4"
)

// TestReleaseConfig: .goreleaser.yaml builds what the README says release
// binaries are: Linux and macOS on amd64 and arm64, trimmed and stripped,
// with grpcnotrace, run and chat (claude) and the version stamped; a second
// build with every store; SHA-256 checksums.
func TestReleaseConfig(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../../.goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Builds []struct {
			ID      string   `yaml:"id"`
			Main    string   `yaml:"main"`
			Goos    []string `yaml:"goos"`
			Goarch  []string `yaml:"goarch"`
			Flags   []string `yaml:"flags"`
			Tags    []string `yaml:"tags"`
			Ldflags []string `yaml:"ldflags"`
		} `yaml:"builds"`
		Checksum struct {
			Algorithm string `yaml:"algorithm"`
		} `yaml:"checksum"`
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	if len(cfg.Builds) != 2 {
		t.Fatalf("%d builds, want 2 (the default and every store)", len(cfg.Builds))
	}
	for i, b := range cfg.Builds {
		ld := strings.Join(b.Ldflags, " ")
		switch {
		case b.Main != "./cmd/memtool":
			t.Errorf("build %s: main %q", b.ID, b.Main)
		case !slices.Equal(b.Goos, []string{"linux", "darwin"}) || !slices.Equal(b.Goarch, []string{"amd64", "arm64"}):
			t.Errorf("build %s: platforms %v %v", b.ID, b.Goos, b.Goarch)
		case !slices.Contains(b.Flags, "-trimpath"):
			t.Errorf("build %s: flags %v lack -trimpath", b.ID, b.Flags)
		case !strings.Contains(ld, "-s -w") || !strings.Contains(ld, "-X main.version="):
			t.Errorf("build %s: ldflags %q do not strip and stamp the version", b.ID, ld)
		case !slices.Contains(b.Tags, "grpcnotrace") || !slices.Contains(b.Tags, claudeTag):
			t.Errorf("build %s: tags %v lack grpcnotrace or %s", b.ID, b.Tags, claudeTag)
		case i == 1 && !(slices.Contains(b.Tags, "gcs") && slices.Contains(b.Tags, "azure")):
			t.Errorf("build %s: tags %v, want every store (gcs, azure)", b.ID, b.Tags)
		case i == 0 && (slices.Contains(b.Tags, "gcs") || slices.Contains(b.Tags, "azure")):
			t.Errorf("build %s is the default one, without gcs and azure: tags %v", b.ID, b.Tags)
		}
	}
	if cfg.Checksum.Algorithm != "sha256" {
		t.Errorf("checksum algorithm %q, want sha256", cfg.Checksum.Algorithm)
	}
}
