//go:build real

package real

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/conditions"
	"github.com/appkeeper/appkeeper/test/framework/await"
)

// A node lost for good while a WebServer, a Memcached, a PodSet and a WordPress (on wp-content
// every node mounts) of three pods each run, their pods spread over the three nodes: the API
// server keeps the lost node's pods until the node is found lost, then the operator deletes them,
// and each instance is whole again on the two nodes left, having said in between that it was
// Degraded because of the lost node. The node's power then comes back, for the scenarios that
// follow.
func TestEveryKindIsWholeAgainOnTheNodesLeftAfterANodeIsLost(t *testing.T) {
	// WordPress's Apache starts as root: the namespace is baseline.
	ns := newNamespace(t, "lost", baseline)
	node := cluster.RealNodeNames()[len(cluster.RealNodeNames())-1]
	created := time.Now()
	kubectl(t, fmt.Sprintf(`
apiVersion: apps.appkeeper.dev/v1alpha1
kind: WebServer
metadata: {name: web}
spec: {image: %s, replicas: 3}
---
apiVersion: apps.appkeeper.dev/v1alpha1
kind: Memcached
metadata: {name: cache}
spec: {image: %s, size: 3}
---
apiVersion: apps.appkeeper.dev/v1alpha1
kind: PodSet
metadata: {name: workers}
spec:
  replicas: 3
  template:
    spec:
      securityContext:
        runAsNonRoot: true
        runAsUser: 65534
        seccompProfile: {type: RuntimeDefault}
      terminationGracePeriodSeconds: 1
      containers:
        - name: main
          image: %s
          command: ["sleep", "3600"]
          securityContext:
            allowPrivilegeEscalation: false
            capabilities: {drop: [ALL]}
---
apiVersion: apps.appkeeper.dev/v1alpha1
kind: WordPress
metadata: {name: blog}
spec:
  image: %s
  replicas: 3
  storage: {size: 1Gi, accessModes: [ReadWriteMany]}
  database:
    mysql:
      image: %s
      storage: {size: 1Gi}
      # The site's one database server stays off the node the test loses: a MySQL member on a
      # lost node waits for the node, or for a person to delete it.
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
              - matchExpressions:
                  - {key: kubernetes.io/hostname, operator: NotIn, values: [%s]}
`, nginxImage, memcachedImage, busyboxImage, wordpressImage, mariadbImage, node), "apply", "-n", ns, "-f", "-")
	instances := []lostNodeInstance{
		{kind: "WebServer", name: "web", labels: (&appsv1alpha1.WebServer{ObjectMeta: metav1.ObjectMeta{Name: "web"}}).SelectorLabels()},
		{kind: "Memcached", name: "cache", labels: (&appsv1alpha1.Memcached{ObjectMeta: metav1.ObjectMeta{Name: "cache"}}).SelectorLabels()},
		{kind: "PodSet", name: "workers", labels: (&appsv1alpha1.PodSet{ObjectMeta: metav1.ObjectMeta{Name: "workers"}}).SelectorLabels()},
		{kind: "WordPress", name: "blog", labels: (&appsv1alpha1.WordPress{ObjectMeta: metav1.ObjectMeta{Name: "blog"}}).SelectorLabels()},
	}
	for _, in := range instances {
		waitAvailable(t, ns, in.kind, in.name, created)
	}
	t.Cleanup(func() {
		if err := cluster.RestartNode(context.Background(), node); err != nil {
			t.Errorf("restart the lost node %s: %v", node, err)
		}
	})
	lost := time.Now()
	if err := cluster.LoseNode(node); err != nil {
		t.Fatal(err)
	}
	// Every instance at every poll: each says what it says of its pod on the lost node only while
	// the pod is there.
	whole := map[string]time.Duration{}
	degraded := map[string]string{}
	await.Eventually(t, 4*time.Minute, func(ctx context.Context) error {
		var notYet []string
		for _, in := range instances {
			if _, done := whole[in.kind]; done {
				continue
			}
			is, err := in.wholeWithout(ctx, ns, node, degraded)
			if err != nil {
				return err
			}
			if !is {
				notYet = append(notYet, in.kind+" "+in.name)
				continue
			}
			whole[in.kind] = time.Since(lost)
		}
		if len(notYet) > 0 {
			return fmt.Errorf("not whole again yet: %s", strings.Join(notYet, ", "))
		}
		return nil
	})
	for _, in := range instances {
		t.Logf("%s %s whole again on the nodes left %s after %s was lost; Degraded in between: %s", in.kind, in.name, whole[in.kind].Round(time.Second), node, degraded[in.kind])
		if degraded[in.kind] == "" {
			t.Errorf("%s %s never said Degraded %s while its pod was on the lost node %s", in.kind, in.name, appsv1alpha1.ReasonNodeLost, node)
		}
	}
	await.WantEvents(t, k8s, ns, time.Minute, appsv1alpha1.EventLostNodePodDeleted)
}

type lostNodeInstance struct {
	kind, name string
	labels     map[string]string
}

// wholeWithout tells whether the instance is Available with three ready pods, none on node, and
// records in degraded what it said when it said it was Degraded because of node.
func (in lostNodeInstance) wholeWithout(ctx context.Context, ns, node string, degraded map[string]string) (bool, error) {
	conds, generation, err := conditionsOf(ctx, ns, in.kind, in.name)
	if err != nil {
		return false, err
	}
	if c := meta.FindStatusCondition(conds, appsv1alpha1.ConditionDegraded); c != nil && c.Status == metav1.ConditionTrue &&
		c.Reason == appsv1alpha1.ReasonNodeLost && strings.Contains(c.Message, "its node "+node+" ") {
		degraded[in.kind] = c.Message
	}
	pods := &corev1.PodList{}
	if err := k8s.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels(in.labels)); err != nil {
		return false, err
	}
	ready := 0
	for _, pod := range pods.Items {
		if pod.Spec.NodeName == node {
			return false, nil
		}
		if pod.DeletionTimestamp == nil && conditions.PodReady(&pod) {
			ready++
		}
	}
	available := await.ConditionIs(conds, generation, appsv1alpha1.ConditionAvailable, metav1.ConditionTrue) == nil
	return ready == 3 && available, nil
}
