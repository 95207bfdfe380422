//go:build real

package real

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/appkeeper/appkeeper/internal/localcluster"
	"github.com/appkeeper/appkeeper/test/framework/await"
)

// primaryNodeHung freezes the whole node of the primary, its kubelet and every process of its
// pods, as a hypervisor's stall would: the node's lease outlives the hang, so that the kubelet
// never reports the pod gone, and the former primary wakes believing it still is.
func (c *clusterUnderTest) primaryNodeHung(t *testing.T) {
	c.stalledPrimary(t, "primary's node hung 20 s", func(t *testing.T, pod *corev1.Pod) func() {
		ctx, cancel := context.WithCancel(context.Background())
		thawed := make(chan error, 1)
		// The hang ends when resumed; its own bound only guards against a test that never does.
		go func() { thawed <- cluster.HangNode(ctx, pod.Spec.NodeName, 10*hang) }()
		return sync.OnceFunc(func() {
			cancel()
			if err := <-thawed; err != nil {
				t.Error(err)
			}
		})
	})
}

// primaryNodeLost ends the primary's node as a power cut would, and restarts it once a replica
// has taken over: the former primary's server starts again on what its volume held, rolls back
// what no replica acknowledged, and comes back as a replica. The node's lease outlives the loss.
func (c *clusterUnderTest) primaryNodeLost(t *testing.T) {
	c.stalledPrimary(t, "primary's node lost 20 s", func(t *testing.T, pod *corev1.Pod) func() {
		if err := cluster.LoseNode(pod.Spec.NodeName); err != nil {
			t.Fatal(err)
		}
		return sync.OnceFunc(func() {
			if err := cluster.RestartNode(context.Background(), pod.Spec.NodeName); err != nil {
				t.Error(err)
			}
		})
	})
}

// primaryNodeCutOff cuts the primary's node off from the other nodes and from the host, where
// the operator and the writer run: the primary lives on, and its clients wait, but no replica
// acknowledges and the operator cannot read it. Its kubelet still talks to the API server.
func (c *clusterUnderTest) primaryNodeCutOff(t *testing.T) {
	c.stalledPrimary(t, "primary's node cut off 20 s", partition(true))
}

// primaryCutOffFromReplicas cuts the primary's node off from the other nodes only: the operator
// reads the primary and its clients reach it, but its commits wait for an acknowledgement no
// replica can send, until a replica takes over.
func (c *clusterUnderTest) primaryCutOffFromReplicas(t *testing.T) {
	c.stalledPrimary(t, "primary cut off from its replicas 20 s", partition(false))
}

// partition is a stall that partitions a pod's node, from the host too with fromHost.
func partition(fromHost bool) func(*testing.T, *corev1.Pod) func() {
	return func(t *testing.T, pod *corev1.Pod) func() {
		if err := cluster.PartitionNode(pod.Spec.NodeName, localcluster.Partition{FromOtherNodes: true, FromHost: fromHost}); err != nil {
			t.Fatal(err)
		}
		return sync.OnceFunc(func() {
			if err := cluster.HealNode(pod.Spec.NodeName); err != nil {
				t.Error(err)
			}
		})
	}
}

// spreadOut makes sure that no two members share a node, as a fault of one node assumes: a drain
// leaves the member it evicted beside another. A replica that shares its node is deleted, and the
// members' anti-affinity sends its pod, made again, to a node with no member.
func (c *clusterUnderTest) spreadOut(t *testing.T) {
	m := c.get()
	members := map[string]string{}
	for _, member := range m.Status.Members {
		pod := getPod(t, c.ns, member.Name)
		other, shared := members[pod.Spec.NodeName]
		members[pod.Spec.NodeName] = pod.Name
		if !shared {
			continue
		}
		replica := pod
		if pod.Name == m.Status.Primary {
			replica = getPod(t, c.ns, other)
		}
		if err := k8s.Delete(context.Background(), replica); err != nil {
			t.Fatal(err)
		}
		await.Eventually(t, 2*time.Minute, func(ctx context.Context) error {
			again := &corev1.Pod{}
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(replica), again); err != nil {
				return err
			}
			if again.UID == replica.UID || again.Spec.NodeName == "" {
				return fmt.Errorf("pod %s is not made again yet", replica.Name)
			}
			if again.Spec.NodeName == pod.Spec.NodeName {
				t.Fatalf("pod %s made again on %s, beside %s", replica.Name, again.Spec.NodeName, other)
			}
			return nil
		})
		t.Logf("%s shared %s with another member: moved to a node of its own", replica.Name, pod.Spec.NodeName)
		c.waitWhole(m.Status.Epoch - 1)
		c.spreadOut(t)
		return
	}
}

// primaryKubeletCutOff cuts the kubelet of the primary's node off from the API server, and nothing
// else: the primary serves on and answers the operator, but the node is found lost and its pods
// are marked unready, so that the client Service no longer sends the primary anything, and no
// failover comes, since the primary answers. The operator switches over to a replica on another
// node; nothing acknowledged is lost, and once healed the node's member is a replica.
func (c *clusterUnderTest) primaryKubeletCutOff(t *testing.T) {
	c.t = t
	c.spreadOut(t)
	w := c.startImpatientWriter(t, writerConnections)
	c.waitForAcks(w, 100)
	before := c.get()
	node := getPod(t, c.ns, before.Status.Primary).Spec.NodeName
	if err := cluster.PartitionNode(node, localcluster.Partition{FromAPIServer: true}); err != nil {
		t.Fatal(err)
	}
	cut := time.Now()
	heal := sync.OnceFunc(func() {
		if err := cluster.HealNode(node); err != nil {
			t.Error(err)
		}
	})
	t.Cleanup(heal)
	await.Eventually(t, 2*time.Minute, func(context.Context) error {
		if m := c.get(); m.Status.Epoch == before.Status.Epoch {
			return fmt.Errorf("%s is still the primary", m.Status.Primary)
		}
		return nil
	})
	moved := time.Since(cut)
	c.waitForAcks(w, 100)
	heal()
	after := c.waitWhole(before.Status.Epoch)
	r := w.Stop()
	c.issued = r.Issued
	if s := after.Status.LastSwitchover; s == nil || s.From != before.Status.Primary || !strings.Contains(s.Message, "is lost") {
		t.Errorf("last switchover %+v, want one from %s whose node is lost", s, before.Status.Primary)
	}
	t.Logf("%s took over from %s %s after the kubelet of %s was cut off from the API server; %d acknowledged, %d refused, %d in doubt; longest gap between acknowledgements %s",
		after.Status.Primary, before.Status.Primary, moved.Round(time.Second), node, len(r.Acked), len(r.Failed), len(r.InDoubt), r.LongestGap.Round(time.Millisecond))
	c.checkEveryMember(after, r)
	c.record("primary's kubelet cut off from the API server", r)
}
