// Package ociarchive turns a root filesystem folder into a one-layer image tarball in the Docker
// archive format (manifest.json, the config and the layer), which `ctr images import` and
// `docker load` read. It keeps owners, modes, symlinks and hard links, and needs nothing but the
// standard library, so that the local cluster can build an image on a machine without a registry
// or a container engine.
package ociarchive

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"time"
)

// ImageConfig is the runtime part of an image's config, in the field names of the image spec.
type ImageConfig struct {
	User         string              `json:"User,omitempty"`
	Env          []string            `json:"Env,omitempty"`
	Entrypoint   []string            `json:"Entrypoint,omitempty"`
	Cmd          []string            `json:"Cmd,omitempty"`
	ExposedPorts map[string]struct{} `json:"ExposedPorts,omitempty"`
	WorkingDir   string              `json:"WorkingDir,omitempty"`
	StopSignal   string              `json:"StopSignal,omitempty"`
}

// Image is the config file of a one-layer image.
type Image struct {
	Architecture string      `json:"architecture"`
	OS           string      `json:"os"`
	Created      time.Time   `json:"created"`
	Config       ImageConfig `json:"config"`
	RootFS       struct {
		Type    string   `json:"type"`
		DiffIDs []string `json:"diff_ids"`
	} `json:"rootfs"`
}

// ManifestEntry is one image of a Docker archive's manifest.json.
type ManifestEntry struct {
	Config   string   `json:"Config"`
	RepoTags []string `json:"RepoTags"`
	Layers   []string `json:"Layers"`
}

// Pack writes the image tarball of rootfs to output. The layer goes to a temporary file first:
// its digest names it inside the archive and must be known before the archive is written.
func Pack(rootfs, name string, cfg ImageConfig, output string) error {
	layer, err := os.CreateTemp(filepath.Dir(output), ".layer-*.tar")
	if err != nil {
		return err
	}
	defer func() {
		_ = layer.Close()
		_ = os.Remove(layer.Name())
	}()
	digest := sha256.New()
	if err := writeLayer(rootfs, io.MultiWriter(layer, digest)); err != nil {
		return fmt.Errorf("layer of %s: %w", rootfs, err)
	}
	diffID := hex.EncodeToString(digest.Sum(nil))

	img := Image{Architecture: runtime.GOARCH, OS: "linux", Created: time.Now().UTC().Truncate(time.Second), Config: cfg}
	img.RootFS.Type = "layers"
	img.RootFS.DiffIDs = []string{"sha256:" + diffID}
	config, err := json.Marshal(img)
	if err != nil {
		return err
	}
	configSum := sha256.Sum256(config)
	configName := hex.EncodeToString(configSum[:]) + ".json"
	layerName := diffID + "/layer.tar"
	manifest, err := json.Marshal([]ManifestEntry{{Config: configName, RepoTags: []string{name}, Layers: []string{layerName}}})
	if err != nil {
		return err
	}

	out, err := os.Create(output)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(out)
	err = addBytes(tw, configName, config)
	if err == nil {
		err = addBytes(tw, "manifest.json", manifest)
	}
	if err == nil {
		err = addLayer(tw, layerName, layer)
	}
	if err == nil {
		err = tw.Close()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(output)
	}
	return err
}

func addBytes(tw *tar.Writer, name string, data []byte) error {
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg, ModTime: time.Now()}); err != nil {
		return err
	}
	_, err := tw.Write(data)
	return err
}

func addLayer(tw *tar.Writer, name string, layer *os.File) error {
	info, err := layer.Stat()
	if err != nil {
		return err
	}
	if _, err := layer.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Name: filepath.Dir(name) + "/", Mode: 0o755, Typeflag: tar.TypeDir, ModTime: time.Now()}); err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: info.Size(), Typeflag: tar.TypeReg, ModTime: time.Now()}); err != nil {
		return err
	}
	_, err = io.Copy(tw, layer)
	return err
}

// skipContent lists folders a runtime mounts over: the folder stays in the layer, empty.
var skipContent = map[string]bool{"dev": true, "proc": true, "sys": true}

type inode struct{ dev, ino uint64 }

// writeLayer writes rootfs as a layer tar: paths relative to the root, numeric owners only (the
// host's user names mean nothing in the image), and a file met again through a hard link written
// as a link, so it is stored once.
func writeLayer(rootfs string, w io.Writer) error {
	tw := tar.NewWriter(w)
	seen := map[inode]string{}
	err := filepath.WalkDir(rootfs, func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(rootfs, path)
		if err != nil || rel == "." {
			return err
		}
		info, err := os.Lstat(path)
		if err != nil {
			return err
		}
		if !info.IsDir() && !info.Mode().IsRegular() && info.Mode()&fs.ModeSymlink == 0 {
			// Device nodes, sockets and pipes are the runtime's to make.
			return nil
		}
		var target string
		if info.Mode()&fs.ModeSymlink != 0 {
			if target, err = os.Readlink(path); err != nil {
				return err
			}
		}
		hdr, err := tar.FileInfoHeader(info, target)
		if err != nil {
			return err
		}
		hdr.Name = filepath.ToSlash(rel)
		hdr.Uname, hdr.Gname = "", ""
		hdr.Format = tar.FormatPAX
		hdr.ModTime = info.ModTime().Truncate(time.Second)
		hdr.AccessTime, hdr.ChangeTime = time.Time{}, time.Time{}
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			hdr.Uid, hdr.Gid = int(st.Uid), int(st.Gid)
			if info.Mode().IsRegular() && st.Nlink > 1 {
				key := inode{st.Dev, st.Ino}
				if first, ok := seen[key]; ok {
					hdr.Typeflag, hdr.Linkname, hdr.Size = tar.TypeLink, first, 0
				} else {
					seen[key] = hdr.Name
				}
			}
		}
		if info.IsDir() {
			hdr.Name += "/"
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if info.IsDir() && skipContent[rel] {
			return fs.SkipDir
		}
		if hdr.Typeflag != tar.TypeReg {
			return nil
		}
		return copyFile(tw, path)
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

func copyFile(w io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	_, err = io.Copy(w, f)
	return errors.Join(err, f.Close())
}
