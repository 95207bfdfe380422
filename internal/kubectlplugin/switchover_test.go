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

func TestSwitchoverAsksTheOperatorAndPrintsItsAnswer(t *testing.T) {
	ns := newNamespace(t, "switchover")
	single := &appsv1alpha1.MySQL{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "single"}}
	ledger := &appsv1alpha1.MySQL{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ledger"}, Spec: appsv1alpha1.MySQLSpec{Members: 3}}
	create(t, single, ledger)
	fails(t, 1, []string{"mysql/single has one member: there is no replica to switch to"}, "switchover", "-n", ns, "mysql/single")
	fails(t, 2, []string{"ws/web: only mysql/<name> can be given here"}, "switchover", "ws/web")

	r := kubectlAppkeeper(t, "switchover", "-n", ns, "mysql/ledger", "--to", "ledger-2", "--wait=false")
	if r.code != 0 || r.stdout != "mysql/ledger: switchover to ledger-2 asked for\n" {
		t.Fatalf("switchover --wait=false: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(ledger), ledger); err != nil {
		t.Fatal(err)
	}
	if got := ledger.Annotations[appsv1alpha1.SwitchoverAnnotation]; got != "ledger-2" {
		t.Fatalf("annotation %s = %q, want ledger-2", appsv1alpha1.SwitchoverAnnotation, got)
	}
	fails(t, 1, []string{"mysql/ledger has a switchover to ledger-2 that the operator has not taken yet"}, "switchover", "-n", ns, "mysql/ledger")

	// The operator's part: it takes the request and refuses it.
	delete(ledger.Annotations, appsv1alpha1.SwitchoverAnnotation)
	if err := k8s.Update(context.Background(), ledger); err != nil {
		t.Fatal(err)
	}
	answer := func(result, message string) {
		for {
			time.Sleep(200 * time.Millisecond)
			m := &appsv1alpha1.MySQL{}
			if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(ledger), m); err != nil {
				t.Error(err)
				return
			}
			if _, asked := m.Annotations[appsv1alpha1.SwitchoverAnnotation]; !asked {
				continue
			}
			m.Annotations = nil
			if err := k8s.Update(context.Background(), m); err != nil {
				t.Error(err)
				return
			}
			m.Status.LastSwitchover = &appsv1alpha1.SwitchoverStatus{Requested: "any", From: "ledger-0", To: "ledger-0",
				Result: result, Message: message, Time: metav1.Now()}
			setStatus(t, m)
			return
		}
	}
	go answer(appsv1alpha1.SwitchoverRefused, "no replica is in step with the primary")
	r = kubectlAppkeeper(t, "switchover", "-n", ns, "mysql/ledger", "--timeout", "30s")
	if r.code != 1 || !strings.Contains(r.stdout, "mysql/ledger: Refused: no replica is in step with the primary") ||
		!strings.Contains(r.stderr, "switchover refused: no replica is in step with the primary") {
		t.Fatalf("a refused switchover: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}
