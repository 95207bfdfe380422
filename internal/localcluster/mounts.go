package localcluster

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"syscall"
)

// mountPoints lists the mount points of this mount namespace, sorted.
func mountPoints() ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 4 {
			out = append(out, unescapeMount(fields[4]))
		}
	}
	sort.Strings(out)
	return out, sc.Err()
}

// unescapeMount undoes the octal escapes of mountinfo (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			var c byte
			if _, err := fmt.Sscanf(s[i+1:i+4], "%03o", &c); err == nil {
				b.WriteByte(c)
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unmountUnder detaches the mounts below dirs, and the network namespaces the CNI plugins
// mounted, deepest first, except those that were there before.
func unmountUnder(dirs, before []string) []error {
	mounts, err := mountPoints()
	if err != nil {
		return []error{err}
	}
	var errs []error
	for i := len(mounts) - 1; i >= 0; i-- {
		m := mounts[i]
		nodes := underAny(m, dirs) || strings.HasPrefix(m, "/run/netns/") || strings.HasPrefix(m, "/run/containerd/")
		if !nodes || slices.Contains(before, m) {
			continue
		}
		if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
			errs = append(errs, fmt.Errorf("unmounting %s: %w", m, err))
		}
	}
	return errs
}

// RemoveState removes the directory of a stopped cluster, unless a file system is still mounted
// under it, which a removal would reach into: then the directory is kept and the error says why.
func RemoveState(dir string) error {
	points, err := mountPoints()
	if err != nil {
		return err
	}
	for _, point := range points {
		if underAny(point, []string{dir}) {
			return fmt.Errorf("%s is still mounted: %s is kept", point, dir)
		}
	}
	return os.RemoveAll(dir)
}
