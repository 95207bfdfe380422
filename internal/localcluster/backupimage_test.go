package localcluster

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/appkeeper/appkeeper/internal/ociarchive"
)

// buildStatic builds a small Go program as make build builds appkeeper: CGO_ENABLED=0.
func buildStatic(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build a static binary with")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte("package main\n\nfunc main() { println(\"backup\") }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "appkeeper")
	cmd := exec.Command(goBin, "build", "-o", out, src)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=", "GOWORK=off")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v: %s", err, b)
	}
	return out
}

// untar returns the headers and contents of a tar stream by name.
func untar(t *testing.T, r io.Reader) (map[string]*tar.Header, map[string][]byte) {
	t.Helper()
	headers, contents := map[string]*tar.Header{}, map[string][]byte{}
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return headers, contents
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		headers[hdr.Name], contents[hdr.Name] = hdr, data
	}
}

func TestBackupImageHoldsTheBinaryTaggedByItsDigest(t *testing.T) {
	binary := buildStatic(t)
	if err := checkStatic(binary); err != nil {
		t.Fatalf("a CGO_ENABLED=0 binary was refused: %v", err)
	}
	content, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(content)
	dir := t.TempDir()
	name, tarball, err := packBackupImage(binary, dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := "localhost/appkeeper/appkeeper:" + hex.EncodeToString(sum[:])[:12]; name != want {
		t.Errorf("image %s, want %s", name, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "rootfs")); !os.IsNotExist(err) {
		t.Errorf("the root filesystem folder is left behind: %v", err)
	}
	archive, err := os.Open(tarball)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = archive.Close() }()
	_, files := untar(t, archive)
	var manifest []ociarchive.ManifestEntry
	if err := json.Unmarshal(files["manifest.json"], &manifest); err != nil || len(manifest) != 1 {
		t.Fatalf("manifest %s: %v", files["manifest.json"], err)
	}
	if !reflect.DeepEqual(manifest[0].RepoTags, []string{name}) {
		t.Errorf("tags %v, want %s", manifest[0].RepoTags, name)
	}
	var img ociarchive.Image
	if err := json.Unmarshal(files[manifest[0].Config], &img); err != nil {
		t.Fatal(err)
	}
	if img.Config.User != "65532:65532" || !reflect.DeepEqual(img.Config.Entrypoint, []string{"/appkeeper"}) {
		t.Errorf("config runs %v as %q, want /appkeeper as 65532:65532", img.Config.Entrypoint, img.Config.User)
	}
	headers, contents := untar(t, bytes.NewReader(files[manifest[0].Layers[0]]))
	app := headers["appkeeper"]
	if app == nil || app.Typeflag != tar.TypeReg || app.Mode&0o7777 != 0o755 || !bytes.Equal(contents["appkeeper"], content) {
		t.Errorf("/appkeeper = %+v, same content: %v", app, bytes.Equal(contents["appkeeper"], content))
	}
	if tmp := headers["tmp/"]; tmp == nil || tmp.Mode&0o7777 != 0o1777 {
		t.Errorf("/tmp = %+v, want a sticky folder writable by all", tmp)
	}
}

func TestBackupImageRefusesWhatItCannotRun(t *testing.T) {
	script := filepath.Join(t.TempDir(), "appkeeper")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := checkStatic(script); err == nil {
		t.Error("a script was taken for an executable")
	}
	// A program of the system, linked against its C library.
	dynamic, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true command")
	}
	err = checkStatic(dynamic)
	if err == nil {
		t.Skipf("%s is statically linked here", dynamic)
	}
	if !strings.Contains(err.Error(), "CGO_ENABLED=0") || !strings.Contains(err.Error(), "dynamically linked") {
		t.Errorf("the error does not say how to build a static binary: %v", err)
	}
}

func TestBackupImageBinaryDefaultsOnlyToTheAppkeeperCommand(t *testing.T) {
	// This test binary is not the appkeeper command: it must be told which binary to pack.
	if _, err := backupImageBinary(""); err == nil || !strings.Contains(err.Error(), "Options.AppkeeperBinary") {
		t.Errorf("the test binary was taken for appkeeper: %v", err)
	}
	binary := buildStatic(t)
	if got, err := backupImageBinary(binary); err != nil || got != binary {
		t.Errorf("backupImageBinary(%s) = %s, %v", binary, got, err)
	}
}
