package localcluster

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func TestASeededRootSharesTheStoresBlobsAndOwnsItsDatabase(t *testing.T) {
	store, root := t.TempDir(), filepath.Join(t.TempDir(), "root")
	blob := filepath.Join(store, contentBlobsDir, "sha256", "abc")
	db := filepath.Join(store, "io.containerd.metadata.v1.bolt", "meta.db")
	for path, content := range map[string]string{blob: "layer", db: "images"} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	if err := seedRoot(store, root); err != nil {
		t.Fatal(err)
	}
	if inode(t, blob) != inode(t, filepath.Join(root, contentBlobsDir, "sha256", "abc")) {
		t.Error("a content blob was copied: every node start would write the images again")
	}
	seededDB := filepath.Join(root, "io.containerd.metadata.v1.bolt", "meta.db")
	if inode(t, db) == inode(t, seededDB) {
		t.Fatal("the metadata database is shared: a node's containerd would write into the store")
	}
	if err := os.WriteFile(seededDB, []byte("containers"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(db); string(b) != "images" {
		t.Errorf("the store's database reads %q after a node wrote its own", b)
	}
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(blob); err != nil {
		t.Errorf("removing a node's root removed the store's blob: %v", err)
	}
}

func TestAnImageRebuiltGetsANewStore(t *testing.T) {
	images := t.TempDir()
	for _, f := range localImageFiles {
		if err := os.WriteFile(filepath.Join(images, f), []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before, err := imageStoreKey(images)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := imageStoreKey(images); again != before {
		t.Fatalf("the same images gave two stores: %s and %s", before, again)
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(filepath.Join(images, "nginx.tar"), later, later); err != nil {
		t.Fatal(err)
	}
	if after, _ := imageStoreKey(images); after == before {
		t.Error("a rebuilt image kept the store of the image before it")
	}
	if err := os.Remove(filepath.Join(images, "mariadb.tar")); err != nil {
		t.Fatal(err)
	}
	if _, err := imageStoreKey(images); err == nil {
		t.Error("a missing image file gave a store")
	}
}

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}
