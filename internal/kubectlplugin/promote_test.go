package kubectlplugin_test

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

func TestPromoteNeedsABlockedFailoverAndTheAcceptanceOfLoss(t *testing.T) {
	ns := newNamespace(t, "promote")
	single := &appsv1alpha1.MySQL{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "single"}}
	ledger := &appsv1alpha1.MySQL{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ledger"}, Spec: appsv1alpha1.MySQLSpec{Members: 3}}
	create(t, single, ledger)
	fails(t, 2, []string{"give --accept-data-loss to go ahead"}, "promote", "-n", ns, "mysql/ledger")
	fails(t, 1, []string{"mysql/single has one member: there is no replica to promote"}, "promote", "-n", ns, "mysql/single", "--accept-data-loss")
	ledger.Status.Primary = "ledger-0"
	setStatus(t, ledger)
	fails(t, 1, []string{"mysql/ledger has no blocked failover (its primary is ledger-0): nothing to promote"},
		"promote", "-n", ns, "mysql/ledger", "--accept-data-loss")

	blocked := "the primary ledger-0 failed (it stopped answering) and no replica is promoted: ledger-2 cannot be read"
	ledger.Status.Conditions = []metav1.Condition{{Type: appsv1alpha1.ConditionDegraded, Status: metav1.ConditionTrue,
		Reason: appsv1alpha1.ReasonFailoverBlocked, Message: blocked, LastTransitionTime: metav1.Now()}}
	setStatus(t, ledger)
	// The operator's part: it takes the request and records the failover.
	go func() {
		for {
			time.Sleep(200 * time.Millisecond)
			m := &appsv1alpha1.MySQL{}
			if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(ledger), m); err != nil {
				t.Error(err)
				return
			}
			if why := m.Annotations[appsv1alpha1.PromoteAnnotation]; why != "node lost" {
				continue
			}
			m.Annotations = nil
			if err := k8s.Update(context.Background(), m); err != nil {
				t.Error(err)
				return
			}
			now := metav1.Now()
			m.Status.Primary, m.Status.Conditions = "ledger-1", nil
			m.Status.LastFailover = &appsv1alpha1.FailoverStatus{From: "ledger-0", To: "ledger-1", Reason: "it stopped answering",
				Detected: now, Writable: now, Duration: metav1.Duration{Duration: 41 * time.Second}, AcceptedDataLoss: true}
			setStatus(t, m)
			return
		}
	}()
	r := kubectlAppkeeper(t, "promote", "-n", ns, "mysql/ledger", "--accept-data-loss", "--reason", "node lost", "--timeout", "30s")
	if r.code != 0 || !strings.Contains(r.stdout, "mysql/ledger: promotion accepting data loss asked for") ||
		!strings.Contains(r.stdout, blocked) ||
		!strings.Contains(r.stdout, "mysql/ledger: ledger-1 took over from ledger-0, writable 41s after the failure was found, accepting data loss") {
		t.Fatalf("a promotion: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}
