package localcluster

import (
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"

	"github.com/appkeeper/appkeeper/internal/ociarchive"
)

// The backup image: the backup Jobs run the appkeeper binary from an image that holds it at
// /appkeeper, which on a cluster is the operator's own image. The real node can pull nothing, so
// it packs one at each start from the binary that runs the local cluster: the Jobs run the same
// code as the operator. The tag names the binary's content rather than "latest", which would make
// the kubelet try to pull it for every pod.
const (
	backupImageRepository = "localhost/appkeeper/appkeeper"
	// appkeeperCommand is the main package of the appkeeper binary, as its build information
	// records it.
	appkeeperCommand = "github.com/appkeeper/appkeeper/cmd/appkeeper"
	// backupImageUser is the distroless nonroot user the operator's image runs as.
	backupImageUser = "65532:65532"
)

// defaultAppkeeperBinary is the running executable when it is the appkeeper command, and empty
// otherwise: a test binary holds no backup subcommands.
func defaultAppkeeperBinary() string {
	info, ok := debug.ReadBuildInfo()
	if !ok || info.Path != appkeeperCommand {
		return ""
	}
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	return exe
}

// backupImageBinary is the appkeeper binary the backup image is packed from, given or the running
// executable, once checked to run in that image.
func backupImageBinary(given string) (string, error) {
	binary := given
	if binary == "" {
		if binary = defaultAppkeeperBinary(); binary == "" {
			return "", errors.New("the real node packs the backup image from the appkeeper binary, and this program is not it: set Options.AppkeeperBinary")
		}
	}
	return binary, checkStatic(binary)
}

// elfMachines are the ELF machines of the architectures whose binaries checkStatic checks.
var elfMachines = map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}

// checkStatic refuses a binary that a container of the backup image could not run: the image
// holds nothing but the binary, so there is no dynamic loader and no C library to link against.
func checkStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("the backup image's binary %s is not an executable of this machine: %w", path, err)
	}
	defer func() { _ = f.Close() }()
	if want, ok := elfMachines[runtime.GOARCH]; ok && f.Machine != want {
		return fmt.Errorf("the backup image's binary %s is for %s, not this machine's %s", path, f.Machine, runtime.GOARCH)
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		return fmt.Errorf("reading the libraries of %s: %w", path, err)
	}
	dynamic := len(libs) > 0
	for _, p := range f.Progs {
		dynamic = dynamic || p.Type == elf.PT_INTERP
	}
	if dynamic {
		return fmt.Errorf("the backup image's binary %s is dynamically linked (%v) and cannot run in an image without a C library: build it with CGO_ENABLED=0, as \"make build\" does", path, libs)
	}
	return nil
}

// packBackupImage packs the static binary into a one-layer image in dir: /appkeeper, mode 0755,
// run as the operator image's user, and /tmp, as that image has. It returns the image's name,
// tagged with the first 12 hex digits of the binary's SHA-256, and the tarball to import.
func packBackupImage(binary, dir string) (name, tarball string, err error) {
	rootfs := filepath.Join(dir, "rootfs")
	defer func() { err = errors.Join(err, os.RemoveAll(rootfs)) }()
	if err := os.MkdirAll(filepath.Join(rootfs, "tmp"), 0o755); err != nil {
		return "", "", err
	}
	// MkdirAll's mode passes through the umask, and drops the sticky bit.
	if err := os.Chmod(filepath.Join(rootfs, "tmp"), os.ModeSticky|0o777); err != nil {
		return "", "", err
	}
	sum, err := copyExecutable(binary, filepath.Join(rootfs, "appkeeper"))
	if err != nil {
		return "", "", err
	}
	name = backupImageRepository + ":" + sum[:12]
	tarball = filepath.Join(dir, "appkeeper.tar")
	cfg := ociarchive.ImageConfig{
		User:       backupImageUser,
		Env:        []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
		Entrypoint: []string{"/appkeeper"},
	}
	if err := ociarchive.Pack(rootfs, name, cfg, tarball); err != nil {
		return "", "", fmt.Errorf("packing the backup image: %w", err)
	}
	return name, tarball, nil
}

// copyExecutable copies src to dst with mode 0755 and returns the hex SHA-256 of what it copied,
// so the tag names exactly the content in the image.
func copyExecutable(src, dst string) (string, error) {
	in, err := os.Open(src)
	if err != nil {
		return "", err
	}
	defer func() { _ = in.Close() }()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	if err != nil {
		return "", err
	}
	digest := sha256.New()
	_, err = io.Copy(io.MultiWriter(out, digest), in)
	err = errors.Join(err, out.Close())
	if err == nil {
		// The umask applies to OpenFile's mode too.
		err = os.Chmod(dst, 0o755)
	}
	if err != nil {
		return "", fmt.Errorf("copying %s into the backup image: %w", src, err)
	}
	return hex.EncodeToString(digest.Sum(nil)), nil
}

// BackupImage is the image of the appkeeper binary that the real node imported at its start, for
// the operator's backup Jobs (operator.Options.BackupImage); empty without a real node.
func (c *Cluster) BackupImage() string {
	if c.real == nil {
		return ""
	}
	return c.real.backupImage
}
