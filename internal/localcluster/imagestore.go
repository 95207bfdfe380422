package localcluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// A node's containerd would hash every byte of every local image at each start (over 1 GB, half a
// minute on a small machine, and again for every node). Instead the images are imported once into
// a store beside them, and each node's containerd starts from a copy of that store: its content
// blobs linked, not copied, and its metadata database copied. containerd never writes a committed
// blob again and only unlinks one it collects, so the store outlives every node. The images are
// not unpacked there: containerd unpacks an image when the first container needs it.
const (
	storePrefix     = ".store-"
	contentBlobsDir = "io.containerd.content.v1.content/blobs"
)

// imageStore is the folder holding containerd's root with the local images imported, built the
// first time these image files and this containerd are seen.
func (n *realNodes) imageStore(ctx context.Context) (string, error) {
	key, err := imageStoreKey(n.images)
	if err != nil {
		return "", err
	}
	store := filepath.Join(n.images, storePrefix+key)
	if _, err := os.Stat(store); err == nil {
		return store, nil
	}
	began := time.Now()
	if err := n.buildImageStore(ctx, store); err != nil {
		return "", fmt.Errorf("importing the local images: %w", err)
	}
	n.log("imported the local images into a store every node starts from", "store", store, "took", time.Since(began).Round(time.Millisecond))
	return store, nil
}

// imageStoreKey names the image files and containerd version a store was built from: a rebuilt
// image has a new size or modification time.
func imageStoreKey(images string) (string, error) {
	h := sha256.New()
	fmt.Fprintln(h, ContainerdVersion)
	for _, f := range localImageFiles {
		fi, err := os.Stat(filepath.Join(images, f))
		if err != nil {
			return "", err
		}
		fmt.Fprintln(h, f, fi.Size(), fi.ModTime().UnixNano())
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// buildImageStore runs a containerd of its own on a scratch root, imports the local images and
// stops it, then puts the root in place, so that a store is whole or absent. Stores of earlier
// images go.
func (n *realNodes) buildImageStore(ctx context.Context, store string) error {
	stale, _ := filepath.Glob(filepath.Join(n.images, storePrefix+"*"))
	for _, s := range stale {
		if err := os.RemoveAll(s); err != nil {
			return err
		}
	}
	scratch := store + ".building"
	state, err := os.MkdirTemp("", "appkeeper-image-store-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(state) }()
	socket := filepath.Join(state, "containerd.sock")
	config := filepath.Join(state, "config.toml")
	// Only the content and metadata stores are needed: no runtime, no CRI, nothing on the host.
	if err := os.WriteFile(config, []byte(fmt.Sprintf(`version = 3
root = %q
state = %q
disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.cri.v1.runtime", "io.containerd.cri.v1.images", "io.containerd.nri.v1.nri"]
[plugins.'io.containerd.server.v1.grpc']
  address = %q
[plugins.'io.containerd.server.v1.ttrpc']
  address = %q
`, scratch, filepath.Join(state, "state"), socket, socket+".ttrpc")), 0o600); err != nil {
		return err
	}
	containerd, err := startChild("containerd", n.binary("containerd"), []string{"--config", config}, os.Environ(), filepath.Join(state, "containerd.log"))
	if err != nil {
		return err
	}
	ctr := func(ctx context.Context, args ...string) error {
		cmd := exec.CommandContext(ctx, n.binary("ctr"), append([]string{"--address", socket, "--namespace", "k8s.io"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("ctr %v: %w: %s", args, err, out)
		}
		return nil
	}
	err = wait.PollUntilContextTimeout(ctx, pollInterval, readyTimeout, true, func(ctx context.Context) (bool, error) {
		if err := containerd.exited(); err != nil {
			return false, err
		}
		return ctr(ctx, "version") == nil, nil
	})
	for _, f := range localImageFiles {
		if err != nil {
			break
		}
		err = ctr(ctx, "images", "import", "--local", "--no-unpack", filepath.Join(n.images, f))
	}
	if stopErr := containerd.stop(stopGrace); err == nil {
		err = stopErr
	}
	if err == nil {
		err = os.Rename(scratch, store)
	}
	if err != nil {
		log, _ := os.ReadFile(containerd.logPath)
		return errors.Join(err, os.RemoveAll(scratch), fmt.Errorf("containerd's log:\n%s", lastLines(string(log), 20)))
	}
	return nil
}

// seedRoot gives the node's containerd a root holding the store's images.
func seedRoot(store, root string) error {
	return filepath.WalkDir(store, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(store, path)
		if err != nil {
			return err
		}
		target := filepath.Join(root, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o711)
		case strings.HasPrefix(rel, contentBlobsDir+string(filepath.Separator)):
			return os.Link(path, target)
		default:
			return copyFile(path, target)
		}
	})
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
