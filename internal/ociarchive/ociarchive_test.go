package ociarchive

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// readTar returns the headers and contents of a tar stream by name.
func readTar(t *testing.T, r io.Reader) (map[string]*tar.Header, map[string][]byte) {
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

func TestPack(t *testing.T) {
	root := t.TempDir()
	mustDo := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	mustDo(os.MkdirAll(filepath.Join(root, "usr/local/bin"), 0o755))
	mustDo(os.MkdirAll(filepath.Join(root, "tmp"), 0o755))
	mustDo(os.Chmod(filepath.Join(root, "tmp"), os.ModeSticky|0o777))
	mustDo(os.MkdirAll(filepath.Join(root, "proc/self"), 0o755))
	mustDo(os.WriteFile(filepath.Join(root, "proc/self/status"), []byte("not in the image"), 0o644))
	mustDo(os.WriteFile(filepath.Join(root, "usr/local/bin/entrypoint"), []byte("#!/bin/sh\nexec \"$@\"\n"), 0o755))
	mustDo(os.Symlink("/usr/local/bin/entrypoint", filepath.Join(root, "entrypoint")))
	mustDo(os.Link(filepath.Join(root, "usr/local/bin/entrypoint"), filepath.Join(root, "usr/local/bin/start")))
	owned := os.Geteuid() == 0
	if owned {
		mustDo(os.Lchown(filepath.Join(root, "tmp"), 999, 998))
	}

	cfg := ImageConfig{
		User:         "999:999",
		Env:          []string{"PATH=/usr/local/bin:/usr/bin:/bin", "GREETING=hello"},
		Entrypoint:   []string{"/usr/local/bin/entrypoint"},
		Cmd:          []string{"sleep", "1"},
		ExposedPorts: map[string]struct{}{"3306/tcp": {}},
		WorkingDir:   "/tmp",
		StopSignal:   "SIGQUIT",
	}
	out := filepath.Join(t.TempDir(), "image.tar")
	mustDo(Pack(root, "localhost/appkeeper/test:1", cfg, out))

	archive, err := os.Open(out)
	mustDo(err)
	defer archive.Close()
	_, files := readTar(t, archive)

	var manifest []ManifestEntry
	mustDo(json.Unmarshal(files["manifest.json"], &manifest))
	if len(manifest) != 1 || len(manifest[0].Layers) != 1 || !reflect.DeepEqual(manifest[0].RepoTags, []string{"localhost/appkeeper/test:1"}) {
		t.Fatalf("manifest = %+v", manifest)
	}
	configData, ok := files[manifest[0].Config]
	if !ok {
		t.Fatalf("the archive lacks the config %s", manifest[0].Config)
	}
	configSum := sha256.Sum256(configData)
	if want := hex.EncodeToString(configSum[:]) + ".json"; manifest[0].Config != want {
		t.Errorf("config named %s, its digest is %s", manifest[0].Config, want)
	}
	var img Image
	mustDo(json.Unmarshal(configData, &img))
	if !reflect.DeepEqual(img.Config, cfg) {
		t.Errorf("config = %+v, want %+v", img.Config, cfg)
	}
	if img.OS != "linux" || img.RootFS.Type != "layers" {
		t.Errorf("os %q, rootfs type %q", img.OS, img.RootFS.Type)
	}

	layer, ok := files[manifest[0].Layers[0]]
	if !ok {
		t.Fatalf("the archive lacks the layer %s", manifest[0].Layers[0])
	}
	layerSum := sha256.Sum256(layer)
	if want := []string{"sha256:" + hex.EncodeToString(layerSum[:])}; !reflect.DeepEqual(img.RootFS.DiffIDs, want) {
		t.Errorf("diff_ids = %v, want %v", img.RootFS.DiffIDs, want)
	}
	headers, contents := readTar(t, bytes.NewReader(layer))

	entry := headers["usr/local/bin/entrypoint"]
	if entry == nil || entry.Typeflag != tar.TypeReg || entry.Mode&0o7777 != 0o755 || string(contents["usr/local/bin/entrypoint"]) != "#!/bin/sh\nexec \"$@\"\n" {
		t.Errorf("entrypoint = %+v, content %q", entry, contents["usr/local/bin/entrypoint"])
	}
	if link := headers["entrypoint"]; link == nil || link.Typeflag != tar.TypeSymlink || link.Linkname != "/usr/local/bin/entrypoint" {
		t.Errorf("symlink = %+v", link)
	}
	if hard := headers["usr/local/bin/start"]; hard == nil || hard.Typeflag != tar.TypeLink || hard.Linkname != "usr/local/bin/entrypoint" {
		t.Errorf("hard link = %+v", hard)
	}
	tmp := headers["tmp/"]
	if tmp == nil || tmp.Typeflag != tar.TypeDir || tmp.Mode&0o7777 != 0o1777 {
		t.Fatalf("tmp = %+v", tmp)
	}
	if owned && (tmp.Uid != 999 || tmp.Gid != 998) {
		t.Errorf("tmp owned by %d:%d, want 999:998", tmp.Uid, tmp.Gid)
	}
	if tmp.Uname != "" || tmp.Gname != "" {
		t.Errorf("tmp carries the host's names %q:%q", tmp.Uname, tmp.Gname)
	}
	if headers["proc/"] == nil || headers["proc/self/"] != nil || headers["proc/self/status"] != nil {
		t.Errorf("proc is kept as an empty folder: %v %v", headers["proc/"] != nil, headers["proc/self/status"] != nil)
	}
}
