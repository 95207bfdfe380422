//go:build real

package real

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/await"
)

func TestMemcachedMembersAnswerByName(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "cache", restricted)
	created := time.Now()
	kubectl(t, fmt.Sprintf(`
apiVersion: apps.appkeeper.dev/v1alpha1
kind: Memcached
metadata:
  name: cache
spec:
  image: %s
  size: 3
`, memcachedImage), "apply", "-n", ns, "-f", "-")
	took := waitAvailable(t, ns, "Memcached", "cache", created)
	mc := &appsv1alpha1.Memcached{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "cache"}, mc); err != nil {
		t.Fatal(err)
	}
	waitPods(t, ns, mc.SelectorLabels(), 3, memcachedImage)
	t.Logf("pod start latency: Memcached of 3 members Available %s after it was created", took)

	peer := clientPod(t, ns, "client", busyboxImage, 65534)
	// The headless Service, named like the Memcached, gives every member a name of its own.
	var answering []string
	for i := range 3 {
		member := fmt.Sprintf("cache-%d", i)
		host := fmt.Sprintf("%s.%s.%s.svc.cluster.local", member, mc.ChildName(), ns)
		value := fmt.Sprintf("v%d", i)
		// quit makes memcached close the connection, which ends nc.
		set := fmt.Sprintf(`printf 'set k 0 0 %d\r\n%s\r\nquit\r\n' | nc %s %d`, len(value), value, host, appsv1alpha1.DefaultMemcachedPort)
		get := fmt.Sprintf(`printf 'get k\r\nquit\r\n' | nc %s %d`, host, appsv1alpha1.DefaultMemcachedPort)
		var stored, got string
		// The member's DNS record follows its readiness by a moment.
		await.Eventually(t, 30*time.Second, func(context.Context) error {
			var err error
			if stored, err = runKubectl("", "exec", "-n", ns, peer, "--", "sh", "-c", set); err != nil {
				return fmt.Errorf("set through %s: %w: %s", host, err, stored)
			}
			return nil
		})
		if !strings.Contains(stored, "STORED") {
			t.Errorf("set through %s: %q, want STORED", host, stored)
			continue
		}
		if got = execIn(t, ns, peer, "sh", "-c", get); !strings.Contains(got, "VALUE k 0 "+strconv.Itoa(len(value))+"\r\n"+value+"\r\nEND") {
			t.Errorf("get through %s: %q, want the value %s", host, got, value)
			continue
		}
		answering = append(answering, member)
	}
	// Each member keeps its own keys: what a client hashes over is status.nodes.
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "cache"}, mc); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(mc.Status.Nodes, answering) {
		t.Errorf("status.nodes = %v, want the members that answered: %v", mc.Status.Nodes, answering)
	}
}
