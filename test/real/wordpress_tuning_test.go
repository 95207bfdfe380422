//go:build real

package real

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/tuning"
	"github.com/appkeeper/appkeeper/test/framework/await"
)

// wordpressMemory is the tuned site's memory limit: a few workers, so that the rush below asks
// for many times more than Apache may run.
const wordpressMemory = "256Mi"

// rushFor is how long the rush of visitors lasts.
const rushFor = 30 * time.Second

// TestAWordPressSizedFromItsMemoryServesARushWithinIt runs a site with tuning Auto, a memory limit
// and a rush of visitors four times as many as the workers tuning allows, each reading pages as
// fast as they come. Apache must run no more workers than computed, serve every request, and not
// be killed for its memory. More memory then rolls the pods with more workers, with a Tuned
// Event.
func TestAWordPressSizedFromItsMemoryServesARushWithinIt(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "wptuned", baseline)
	created := time.Now()
	kubectl(t, fmt.Sprintf(`{"apiVersion": "apps.appkeeper.dev/v1alpha1", "kind": "WordPress", "metadata": {"name": "blog"},
  "spec": {"image": %q, "database": {"mysql": {"image": %q, "storage": {"size": "1Gi"}}},
    "resources": {"limits": {"memory": %q}}, "tuning": {"mode": "Auto"}}}`, wordpressImage, mariadbImage, wordpressMemory), "apply", "-n", ns, "-f", "-")
	site := waitWordPress(t, ns, created, 1)
	wp := &appsv1alpha1.WordPress{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "blog"}, wp); err != nil {
		t.Fatal(err)
	}
	tuned := requireTuning(t, wp.Status.Tuning)
	if tuned.Mode != appsv1alpha1.TuningAuto || tuned.Memory != wordpressMemory || len(tuned.Settings) != 1 {
		t.Fatalf("status.tuning %+v, want Auto's workers for %s", tuned, wordpressMemory)
	}
	workers, err := strconv.Atoi(tuned.Settings[0].Value)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("tuned for %s: %s; worst case %s", tuned.Memory, tuning.List(tuned.Settings), tuned.WorstCase)
	installSite(t, site, "editor", "a long passphrase for the tuned site")
	pods := waitPods(t, ns, wp.SelectorLabels(), 1, wordpressImage)
	pod := pods[0]
	idle, err := containerMemory(ns, pod.Name)
	if err != nil {
		t.Fatal(err)
	}
	visitors := 4 * workers
	r := rush(ns, pod.Name, site, visitors)
	t.Logf("%d visitors for %s: %d pages served, %d failed; at most %d workers at once; the container's memory %dMi idle, %dMi at most, its limit %s",
		visitors, rushFor, r.served, len(r.failures), r.mostWorkers, idle, r.peakMemory, wordpressMemory)
	if len(r.failures) > 0 {
		t.Errorf("%d requests failed, the first: %v", len(r.failures), r.failures[0])
	}
	if r.mostWorkers > workers {
		t.Errorf("Apache ran %d workers at once, want at most MaxRequestWorkers %d", r.mostWorkers, workers)
	}
	after := getPod(t, ns, pod.Name)
	if restartCount(after) != restartCount(&pod) {
		t.Errorf("pod %s restarted %d times during the rush (%+v), want none", pod.Name, restartCount(after)-restartCount(&pod),
			after.Status.ContainerStatuses[0].LastTerminationState)
	}

	t.Run("more memory rolls the pods with more workers", func(t *testing.T) {
		changed := time.Now()
		kubectl(t, "", "patch", "-n", ns, "wordpress", "blog", "--type=merge", "-p", `{"spec":{"resources":{"limits":{"memory":"384Mi"}}}}`)
		await.WantEvents(t, k8s, ns, timeout, appsv1alpha1.EventTuned)
		waitAvailable(t, ns, "WordPress", "blog", changed)
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "blog"}, wp); err != nil {
			t.Fatal(err)
		}
		more := requireTuning(t, wp.Status.Tuning)
		pods := waitPods(t, ns, wp.SelectorLabels(), 1, wordpressImage)
		args := strings.Join(pods[0].Spec.Containers[0].Args, " ")
		if more.Memory != "384Mi" || len(more.Settings) != 1 || !strings.HasSuffix(args, "MaxRequestWorkers "+more.Settings[0].Value) ||
			more.Settings[0].Value == tuned.Settings[0].Value {
			t.Errorf("status.tuning %+v and the pod's arguments %q, want more workers for 384Mi on Apache's command line", more, args)
		}
	})
}

// rushed is what a rush did: pages served, the requests that failed, and the most workers and
// memory, in MiB, seen at once.
type rushed struct {
	served      int
	failures    []error
	mostWorkers int
	peakMemory  int64
}

// rush has visitors read the site's front page and login page as fast as they are served for
// rushFor, counting Apache's workers and the container's memory each second meanwhile. Each page
// is read on a connection of its own, as a new visitor's would be: one kept alive would hold its
// worker between pages.
func rush(ns, pod, site string, visitors int) rushed {
	var r rushed
	var mu sync.Mutex
	ctx, cancel := context.WithTimeout(context.Background(), rushFor)
	defer cancel()
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{DisableKeepAlives: true, DialContext: dialCluster}}
	var wg sync.WaitGroup
	for v := range visitors {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				page := site + "/"
				if (v+i)%2 == 1 {
					page = site + "/wp-login.php"
				}
				err := visit(client, page)
				mu.Lock()
				if err != nil {
					r.failures = append(r.failures, err)
				} else {
					r.served++
				}
				mu.Unlock()
			}
		})
	}
	for ctx.Err() == nil {
		if n, err := apacheWorkers(ns, pod); err == nil {
			r.mostWorkers = max(r.mostWorkers, n)
		}
		if m, err := containerMemory(ns, pod); err == nil {
			r.peakMemory = max(r.peakMemory, m)
		}
		time.Sleep(time.Second)
	}
	wg.Wait()
	return r
}

// visit reads page to its end, and fails unless it is served whole with 200 OK. Each visit runs to
// its end: the rush's deadline only stops the loop.
func visit(client *http.Client, page string) error {
	resp, err := client.Get(page)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return fmt.Errorf("%s: %w", page, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", page, resp.Status)
	}
	return nil
}

// apacheWorkers counts the Apache processes of the pod's container besides the parent, which
// serves no request.
func apacheWorkers(ns, pod string) (int, error) {
	out, err := runKubectl("", "exec", "-n", ns, pod, "--", "sh", "-c", "cat /proc/[0-9]*/comm 2>/dev/null | grep -c '^apache2$'")
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(out))
	return n - 1, err
}

// containerMemory is the memory, in MiB, the container's cgroup charges against its limit now
// (cgroup v1 or v2).
func containerMemory(ns, pod string) (int64, error) {
	out, err := runKubectl("", "exec", "-n", ns, pod, "--", "sh", "-c",
		"cat /sys/fs/cgroup/memory/memory.usage_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.current")
	if err != nil {
		return 0, err
	}
	bytes, err := strconv.ParseInt(strings.TrimSpace(out), 10, 64)
	return bytes >> 20, err
}
