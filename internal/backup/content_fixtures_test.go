package backup

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
)

// siteFileSize spans many tar blocks, gzip blocks and age chunks.
const siteFileSize = 5 << 20

// siteFile is a file or folder of makeSite; a symlink when target is set.
type siteFile struct {
	name   string
	mode   fs.FileMode
	data   []byte
	target string
	dir    bool
}

// siteFiles is a WordPress wp-content as a site holds it, in an order where a folder comes
// before what it holds.
func siteFiles() []siteFile {
	photo := make([]byte, siteFileSize)
	_, _ = rand.NewChaCha8([32]byte{7}).Read(photo)
	return []siteFile{
		{name: "uploads", mode: 0o755, dir: true},
		{name: "uploads/2026", mode: 0o755, dir: true},
		{name: "uploads/2026/05", mode: 0o750, dir: true},
		{name: "uploads/2026/05/photo.bin", mode: 0o640, data: photo},
		{name: "uploads/2026/05/empty.txt", mode: 0o644, data: []byte{}},
		{name: "uploads/latest", target: "2026/05/photo.bin"},
		{name: "plugins", mode: 0o755, dir: true},
		{name: "plugins/akismet", mode: 0o755, dir: true},
		{name: "plugins/akismet/" + nonASCII + ".php", mode: 0o644, data: []byte("<?php // " + nonASCII + "\n")},
		{name: "themes", mode: 0o755, dir: true},
		{name: "themes/twentyfour", mode: 0o755, dir: true},
		{name: "themes/twentyfour/style.css", mode: 0o644, data: []byte("body { color: #333 }\n")},
		{name: "themes/twentyfour/config.php", mode: 0o600, data: []byte("<?php return [];\n")},
		{name: "current-theme", target: "themes/twentyfour"},
		// An absolute target is restored as it is, and never followed.
		{name: "hostname", target: "/etc/hostname"},
		{name: "bin", mode: 0o755, dir: true},
		{name: "bin/cron.sh", mode: 0o755, data: []byte("#!/bin/sh\nexit 0\n")},
		{name: "cache", mode: 0o770, dir: true},
		{name: "readonly", mode: 0o555, dir: true},
		{name: "readonly/notice.txt", mode: 0o444, data: []byte("read only\n")},
	}
}

// makeSite writes siteFiles into a new folder, with modes set past the umask and modification
// times in the past, each folder's after what it holds.
func makeSite(t *testing.T) string {
	t.Helper()
	dir := tempDir(t)
	files := siteFiles()
	for _, f := range files {
		p := filepath.Join(dir, f.name)
		var err error
		switch {
		case f.target != "":
			err = os.Symlink(f.target, p)
		case f.dir:
			err = os.Mkdir(p, 0o755)
		default:
			err = os.WriteFile(p, f.data, 0o600)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := len(files) - 1; i >= 0; i-- {
		f := files[i]
		if f.target != "" {
			continue
		}
		p := filepath.Join(dir, f.name)
		// Half a second past the second: the archive keeps times to the second.
		mtime := time.Date(2025, 3, 1, 12, 0, 0, 5e8, time.UTC).Add(time.Duration(i) * time.Hour)
		if err := os.Chmod(p, f.mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// tempDir is t.TempDir, which can be removed when it holds read-only folders and the tests do
// not run as root, as the Jobs do not.
func tempDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Cleanup(func() { makeWritable(dir) }) // runs before t.TempDir's own cleanup
	return dir
}

// makeWritable makes the folders in dir writable.
func makeWritable(dir string) {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o755)
		}
		return nil
	})
}

// treeEntry is what a restore must bring back of an entry.
type treeEntry struct {
	kind   fs.FileMode
	mode   fs.FileMode
	size   int64
	sha256 string
	target string
	mtime  int64 // seconds; symlinks keep the time of their extraction
}

// readTree walks dir without following symlinks.
func readTree(t *testing.T, dir string) map[string]treeEntry {
	t.Helper()
	tree := map[string]treeEntry{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		e := treeEntry{kind: info.Mode().Type(), mode: info.Mode().Perm(), mtime: info.ModTime().Unix()}
		switch {
		case info.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			e.size, e.sha256 = info.Size(), hex.EncodeToString(sum[:])
		case info.Mode()&fs.ModeSymlink != 0:
			e.mode, e.mtime = 0, 0
			if e.target, err = os.Readlink(p); err != nil {
				return err
			}
		}
		tree[filepath.ToSlash(rel)] = e
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// requireSameTree fails when got differs from want in any entry.
func requireSameTree(t *testing.T, got, want map[string]treeEntry) {
	t.Helper()
	var names []string
	for name := range got {
		names = append(names, name)
	}
	for name := range want {
		if _, ok := got[name]; !ok {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		g, inGot := got[name]
		w, inWant := want[name]
		switch {
		case !inWant:
			t.Errorf("%s was not in the archived folder: %+v", name, g)
		case !inGot:
			t.Errorf("%s was not restored", name)
		case g != w:
			t.Errorf("%s came back as %+v, want %+v", name, g, w)
		}
	}
}

// requireEmpty fails when dir holds any entry, such as a temporary folder left behind.
func requireEmpty(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) > 0 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("%s holds %v, want nothing", dir, names)
	}
}

// siteCounts are the regular files of siteFiles and their total size.
func siteCounts() (files int, size int64) {
	for _, f := range siteFiles() {
		if !f.dir && f.target == "" {
			files++
			size += int64(len(f.data))
		}
	}
	return files, size
}

// craftedEntry is an entry of an archive that archive would not write.
type craftedEntry struct {
	hdr  tar.Header
	body string
}

func file(name, body string) craftedEntry {
	return craftedEntry{tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(body))}, body}
}

func dir(name string) craftedEntry {
	return craftedEntry{hdr: tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: 0o755}}
}

func symlink(name, target string) craftedEntry {
	return craftedEntry{hdr: tar.Header{Typeflag: tar.TypeSymlink, Name: name, Linkname: target, Mode: 0o777}}
}

// putCrafted stores a tar of entries at key, with a manifest that vouches for it, as if archive
// had written them: only extract's own checks stand in their way.
func putCrafted(t *testing.T, store storage, key string, entries []craftedEntry) {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		if err := tw.WriteHeader(&e.hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(tw, e.body); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	artifact := contentArtifactKey(key, false)
	sum := sha256.Sum256(buf.Bytes())
	if err := store.put(ctx, artifact, bytes.NewReader(buf.Bytes()), int64(buf.Len())); err != nil {
		t.Fatal(err)
	}
	m := &contentManifest{FormatVersion: contentManifestFormatVersion, Key: key, Artifact: artifact,
		Size: int64(buf.Len()), SHA256: hex.EncodeToString(sum[:]), Format: "tar", Compression: "gzip", Created: time.Now()}
	if err := putJSON(ctx, store, contentManifestKey(key), m); err != nil {
		t.Fatal(err)
	}
}

// changingListing lists a folder as it was a moment before it was read: with entries that are
// gone by then, and with a folder that fails to list.
type changingListing struct {
	fs.ReadDirFS
	ghosts map[string][]fs.DirEntry
	broken string
}

func (c changingListing) ReadDir(name string) ([]fs.DirEntry, error) {
	if name == c.broken {
		return nil, &fs.PathError{Op: "readdirent", Path: name, Err: syscall.EIO}
	}
	entries, err := c.ReadDirFS.ReadDir(name)
	entries = append(entries, c.ghosts[name]...)
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, err
}

// ghost is an entry listed but removed before it is read.
type ghost struct {
	name string
	dir  bool
}

func (g ghost) Name() string { return g.name }
func (g ghost) IsDir() bool  { return g.dir }
func (g ghost) Type() fs.FileMode {
	if g.dir {
		return fs.ModeDir
	}
	return 0
}
func (g ghost) Info() (fs.FileInfo, error) { return nil, fs.ErrNotExist }
