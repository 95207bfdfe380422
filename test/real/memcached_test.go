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

	corev1 "k8s.io/api/core/v1"
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
		host := memberHost(mc, member)
		// The member's DNS record follows its readiness by a moment.
		await.Eventually(t, 30*time.Second, func(context.Context) error { return memcachedSet(ns, peer, host, "v"+strconv.Itoa(i)) })
		if got, err := memcachedGet(ns, peer, host); err != nil || got != "v"+strconv.Itoa(i) {
			t.Errorf("get through %s: %q (%v), want the value v%d", host, got, err, i)
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

	t.Run("a drain moves one member and the others keep their keys", func(t *testing.T) {
		drainMemberNode(t, ns, mc, peer)
	})
}

// drainMemberNode drains the node of a member the client pod peer is not on: the disruption
// budget lets one member go at a time, the members on that node start again on other nodes, and
// the members on the other nodes still hold the keys the test set, v0 on cache-0 and so on.
func drainMemberNode(t *testing.T, ns string, mc *appsv1alpha1.Memcached, peer string) {
	peerPod := &corev1.Pod{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: peer}, peerPod); err != nil {
		t.Fatal(err)
	}
	nodeOf := map[string]string{}
	var node string
	for _, pod := range waitPods(t, ns, mc.SelectorLabels(), 3, memcachedImage) {
		nodeOf[pod.Name] = pod.Spec.NodeName
		if pod.Spec.NodeName != peerPod.Spec.NodeName {
			node = pod.Spec.NodeName
		}
	}
	if node == "" {
		t.Fatalf("every member is on the client's node %s", peerPod.Spec.NodeName)
	}
	drained := time.Now()
	drain(t, ns, node)
	waitAvailable(t, ns, "Memcached", "cache", drained)
	stayed := 0
	for _, pod := range waitPods(t, ns, mc.SelectorLabels(), 3, memcachedImage) {
		host := memberHost(mc, pod.Name)
		if pod.Spec.NodeName == node {
			t.Errorf("member %s is on %s, drained", pod.Name, node)
		}
		var got string
		await.Eventually(t, 30*time.Second, func(context.Context) error {
			var err error
			got, err = memcachedGet(ns, peer, host)
			return err
		})
		want := "v" + strings.TrimPrefix(pod.Name, "cache-")
		switch {
		case nodeOf[pod.Name] == node:
			t.Logf("%s drained; %s started again on %s, Available %s after the drain began, holding %q",
				node, pod.Name, pod.Spec.NodeName, time.Since(drained).Round(time.Millisecond), got)
		case got != want:
			t.Errorf("member %s, which stayed on %s, holds %q after the drain, want %q", pod.Name, pod.Spec.NodeName, got, want)
		default:
			stayed++
		}
	}
	t.Logf("%d members stayed and kept their keys", stayed)
}

// memberHost is the DNS name of a Memcached member.
func memberHost(mc *appsv1alpha1.Memcached, member string) string {
	return fmt.Sprintf("%s.%s.%s.svc.cluster.local", member, mc.ChildName(), mc.Namespace)
}

// memcachedSet stores value under the key k in the member at host, through the pod peer.
func memcachedSet(ns, peer, host, value string) error {
	// quit makes memcached close the connection, which ends nc.
	set := fmt.Sprintf(`printf 'set k 0 0 %d\r\n%s\r\nquit\r\n' | nc -w 2 %s %d`, len(value), value, host, appsv1alpha1.DefaultMemcachedPort)
	out, err := runKubectl("", "exec", "-n", ns, peer, "--", "sh", "-c", set)
	switch {
	case err != nil:
		return fmt.Errorf("set through %s: %w: %s", host, err, out)
	case !strings.Contains(out, "STORED"):
		return fmt.Errorf("set through %s: %q, want STORED", host, out)
	}
	return nil
}

// memcachedGet reads the key k from the member at host, through the pod peer: its value, or ""
// when the member does not hold it.
func memcachedGet(ns, peer, host string) (string, error) {
	get := fmt.Sprintf(`printf 'get k\r\nquit\r\n' | nc -w 2 %s %d`, host, appsv1alpha1.DefaultMemcachedPort)
	out, err := runKubectl("", "exec", "-n", ns, peer, "--", "sh", "-c", get)
	if err != nil {
		return "", fmt.Errorf("get through %s: %w: %s", host, err, out)
	}
	if !strings.HasSuffix(out, "END\r\n") {
		return "", fmt.Errorf("get through %s: %q, want a reply ending in END", host, out)
	}
	lines := strings.Split(out, "\r\n")
	if len(lines) >= 3 && strings.HasPrefix(lines[0], "VALUE k 0 ") {
		return lines[1], nil
	}
	return "", nil
}
