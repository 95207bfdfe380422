//go:build real

package real

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/ackwriter"
	"github.com/appkeeper/appkeeper/test/framework/await"
)

// The negative control of the cluster tests: with durability Preferred and a primary that stops
// waiting for its replicas after 100ms, replicas cut off from the primary, then the primary hung
// so that a replica takes over, the rows the primary acknowledged alone are lost, and the same
// checker that finds nothing lost elsewhere must find them. If it did not, it could not be
// trusted when it finds nothing.
func TestMySQLClusterCheckerSeesLossesWhenDurabilityIsPreferred(t *testing.T) {
	c, _ := newLedger(t, "unprotected", 3, "replication: {durability: Preferred, ackTimeout: 100ms}")
	before := c.waitWhole(0)
	w := c.startWriter(t, writerConnections)
	c.waitForAcks(w, 100)
	primary := getPod(t, c.ns, before.Status.Primary)
	for _, member := range before.Status.Members {
		if member.Name != primary.Name {
			cutFrom(t, getPod(t, c.ns, member.Name), primary.Status.PodIP)
		}
	}
	// Once no replica acknowledges, the primary waits 100ms for one, then commits alone, and the
	// status says so.
	c.waitForAcks(w, 100)
	c.waitDegraded(appsv1alpha1.ReasonUnprotected)
	resume := freeze(t, primary)
	defer resume()
	var after *appsv1alpha1.MySQL
	await.Eventually(t, time.Minute, func(context.Context) error {
		if after = c.get(); after.Status.Epoch == before.Status.Epoch {
			return fmt.Errorf("%s is still the primary", after.Status.Primary)
		}
		return nil
	})
	c.waitForAcks(w, 50)
	r := w.Stop()
	successor := getPod(t, c.ns, after.Status.Primary)
	v, err := ackwriter.Check(context.Background(), c.open(net.JoinHostPort(successor.Status.PodIP, strconv.Itoa(appsv1alpha1.MySQLPort))), r)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Lost) == 0 {
		t.Fatalf("the checker found no lost write on %s after %s, which committed alone, was replaced: %s", successor.Name, primary.Name, v)
	}
	t.Logf("%s took over from %s, which committed alone; the checker found what was lost: %s", successor.Name, primary.Name, v)
}

// cutFrom drops, in pod's own network namespace, what it sends to the MySQL port of address: its
// replication from there stops, while the operator still reads it. Nothing on the host changes,
// and the rule goes with the pod.
func cutFrom(t *testing.T, pod *corev1.Pod, address string) {
	t.Helper()
	rules := fmt.Sprintf("table inet appkeeper_cut {\n chain out {\n  type filter hook output priority 0;\n  ip daddr %s tcp dport %d drop\n }\n}\n",
		address, appsv1alpha1.MySQLPort)
	cmd := exec.Command("nsenter", "-t", strconv.Itoa(mainProcess(t, pod)), "-n", "nft", "-f", "-")
	cmd.Stdin = strings.NewReader(rules)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cut %s from %s: %v\n%s", pod.Name, address, err, out)
	}
	t.Logf("%s sends nothing more to %s:%d", pod.Name, address, appsv1alpha1.MySQLPort)
}
