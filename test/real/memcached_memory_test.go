//go:build real

package real

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	resources "github.com/appkeeper/appkeeper/internal/resources/memcached"
)

// cacheMemory is the member's memory limit: its items get 80 % of it.
const cacheMemory = "64Mi"

// TestAFullMemcachedStaysWithinItsMemory fills a member whose item memory the operator sized from
// its memory limit with twice as much as the limit, in values of three sizes from many
// connections at once: memcached must evict to make room, and the member must not be killed for
// its memory.
func TestAFullMemcachedStaysWithinItsMemory(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "fullcache", restricted)
	created := time.Now()
	kubectl(t, fmt.Sprintf(`{"apiVersion": "apps.appkeeper.dev/v1alpha1", "kind": "Memcached", "metadata": {"name": "cache"},
  "spec": {"image": %q, "size": 1, "resources": {"limits": {"memory": %q}}}}`, memcachedImage, cacheMemory), "apply", "-n", ns, "-f", "-")
	waitAvailable(t, ns, "Memcached", "cache", created)
	mc := &appsv1alpha1.Memcached{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "cache"}, mc); err != nil {
		t.Fatal(err)
	}
	pod := waitPods(t, ns, mc.SelectorLabels(), 1, memcachedImage)[0]
	items, _ := resources.MemoryMB(mc.Spec)
	address := net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(int(mc.Spec.Port)))

	const connections = 16
	limit := resource.MustParse(cacheMemory)
	written, err := fillCache(address, connections, 2*limit.Value())
	if err != nil {
		t.Fatal(err)
	}
	stats, err := cacheStats(address)
	if err != nil {
		t.Fatal(err)
	}
	used := "unknown"
	if mib, err := containerMemory(ns, pod.Name); err == nil {
		used = strconv.FormatInt(mib, 10) + "Mi"
	}
	t.Logf("%d MiB written from %d connections into items of %d MiB (limit %s): %s items held in %s bytes, %s evicted; the container's memory %s",
		written>>20, connections, items, cacheMemory, stats["curr_items"], stats["bytes"], stats["evictions"], used)
	if stats["limit_maxbytes"] != strconv.FormatInt(items<<20, 10) {
		t.Errorf("limit_maxbytes %s, want the %d MiB the operator sized", stats["limit_maxbytes"], items)
	}
	if n, _ := strconv.Atoi(stats["evictions"]); n == 0 {
		t.Errorf("no item evicted after %d MiB written: the cache never filled", written>>20)
	}
	after := getPod(t, ns, pod.Name)
	if restartCount(after) != restartCount(&pod) {
		t.Errorf("pod %s restarted %d times as the cache filled (%+v), want none", pod.Name, restartCount(after)-restartCount(&pod),
			after.Status.ContainerStatuses[0].LastTerminationState)
	}
}

// fillCache stores values of 100 B, 1 KiB and 16 KiB in turn under new keys through connections
// at once, until total bytes are written, and returns how many were.
func fillCache(address string, connections int, total int64) (int64, error) {
	sizes := []int{100, 1 << 10, 16 << 10}
	var mu sync.Mutex
	var written int64
	var firstErr error
	var wg sync.WaitGroup
	for c := range connections {
		wg.Go(func() {
			conn, err := net.DialTimeout("tcp", address, 5*time.Second)
			if err != nil {
				mu.Lock()
				firstErr = err
				mu.Unlock()
				return
			}
			defer func() { _ = conn.Close() }()
			replies := bufio.NewReader(conn)
			for i := 0; ; i++ {
				mu.Lock()
				done := written >= total || firstErr != nil
				mu.Unlock()
				if done {
					return
				}
				size := sizes[i%len(sizes)]
				err := set(conn, replies, fmt.Sprintf("k%d-%d", c, i), size)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				written += int64(size)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return written, firstErr
}

// set stores a value of size bytes under key on conn, and reads memcached's answer from replies.
func set(conn net.Conn, replies *bufio.Reader, key string, size int) error {
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := fmt.Fprintf(conn, "set %s 0 0 %d\r\n%s\r\n", key, size, strings.Repeat("v", size)); err != nil {
		return err
	}
	reply, err := replies.ReadString('\n')
	if err == nil && reply != "STORED\r\n" {
		err = fmt.Errorf("set of %d bytes answered %q", size, reply)
	}
	return err
}

// cacheStats is the member's general statistics, by name.
func cacheStats(address string) (map[string]string, error) {
	conn, err := net.DialTimeout("tcp", address, 5*time.Second)
	if err != nil {
		return nil, err
	}
	defer func() { _ = conn.Close() }()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := fmt.Fprint(conn, "stats\r\n"); err != nil {
		return nil, err
	}
	stats := map[string]string{}
	lines := bufio.NewScanner(conn)
	for lines.Scan() {
		if lines.Text() == "END" {
			return stats, nil
		}
		if f := strings.Fields(lines.Text()); len(f) == 3 && f[0] == "STAT" {
			stats[f[1]] = f[2]
		}
	}
	return nil, fmt.Errorf("stats ended early: %w", cmp.Or(lines.Err(), io.ErrUnexpectedEOF))
}
