package webserver_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/testenv"
)

// TestEditsApplyCannotUndoAreRepaired renumbers by hand a port of the Service and one of the
// Deployment's container, each keeping its name: applied again, the operator's port would stand
// beside the other under the same name, which the API server refuses. The operator repairs both
// with patches, never an update (which its roles do not allow), and keeps no field it wrote
// otherwise than by apply, so that the next change of its own removes what it no longer sets.
func TestEditsApplyCannotUndoAreRepaired(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	operatorLog := testenv.CaptureLog(t)
	createWebServer(t, ns, 1, "nginx:1.23.1")
	dep, svc := childrenExist(t, ns)
	wantServicePorts, wantContainerPorts := svc.DeepCopy().Spec.Ports, dep.DeepCopy().Spec.Template.Spec.Containers[0].Ports

	svc.Spec.Ports[0].Port = 9999
	if err := k8s.Update(ctx, svc); err != nil {
		t.Fatal(err)
	}
	dep.Spec.Template.Spec.Containers[0].Ports[0].ContainerPort = 9999
	if err := k8s.Update(ctx, dep); err != nil {
		t.Fatal(err)
	}
	await.Eventually(t, timeout, func(context.Context) error {
		if got := get(t, ns, "web", &corev1.Service{}).Spec.Ports; fmt.Sprint(got) != fmt.Sprint(wantServicePorts) {
			return fmt.Errorf("service ports %v, want %v", got, wantServicePorts)
		}
		got := get(t, ns, "web", &appsv1.Deployment{}).Spec.Template.Spec.Containers[0].Ports
		if fmt.Sprint(got) != fmt.Sprint(wantContainerPorts) {
			return fmt.Errorf("container ports %v, want %v", got, wantContainerPorts)
		}
		return nil
	})
	waitRestoreLogged(t, operatorLog, ns, "Service", "spec.ports")
	waitRestoreLogged(t, operatorLog, ns, "Deployment", "spec.template.spec.containers[nginx].ports")
	for resource, child := range map[string]client.Object{"services": &corev1.Service{}, "deployments": &appsv1.Deployment{}} {
		path := fmt.Sprintf("/namespaces/%s/%s/web", ns, resource)
		requireRepairedByPatch(t, path)
		for _, entry := range get(t, ns, "web", child).GetManagedFields() {
			if entry.Manager == "appkeeper-webserver" && entry.Operation != metav1.ManagedFieldsOperationApply {
				t.Errorf("%s: the operator holds fields through an %s besides its apply", path, entry.Operation)
			}
		}
	}
}

// waitRestoreLogged waits for a line of the operator's log that tells of the restore of the child
// of that kind in ns, naming field.
func waitRestoreLogged(t *testing.T, operatorLog func() []string, ns, kind, field string) {
	t.Helper()
	await.Eventually(t, timeout, func(context.Context) error {
		for _, line := range operatorLog() {
			if strings.Contains(line, `"msg":"restored child"`) && strings.Contains(line, `"kind":"`+kind+`","child":"`+ns+`/web"`) &&
				strings.Contains(line, `"`+field+`"`) {
				return nil
			}
		}
		return fmt.Errorf("the operator did not log that it restored %s of the %s", field, kind)
	})
}

// requireRepairedByPatch requires that the operator sent no update to path and that no write of
// its there was refused as a conflict.
func requireRepairedByPatch(t *testing.T, path string) {
	t.Helper()
	if n := testenv.Requests(http.MethodPut, path); n != 0 {
		t.Errorf("the operator sent %d updates to %s, want none", n, path)
	}
	if n := testenv.RequestsAnswered(http.StatusConflict, path); n != 0 {
		t.Errorf("%d writes of the operator to %s conflicted, want none", n, path)
	}
}

// TestRepairDuringAFightNeverConflicts has another writer renumber the Service's port every 100 ms
// for 3 s while the operator repairs it: no repair conflicts, and once the other writer stops, the
// Service is restored.
func TestRepairDuringAFightNeverConflicts(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	createWebServer(t, ns, 1, "nginx:1.23.1")
	_, svc := childrenExist(t, ns)
	want := svc.Spec.Ports
	path := fmt.Sprintf("/namespaces/%s/services/web", ns)
	before := testenv.Requests(http.MethodPatch, path)

	end := time.Now().Add(3 * time.Second)
	for port := 9000; time.Now().Before(end); port++ {
		patch := fmt.Sprintf(`{"spec":{"ports":[{"name":"http","port":%d,"protocol":"TCP","targetPort":"http"}]}}`, port)
		if err := k8s.Patch(ctx, svc, client.RawPatch(types.MergePatchType, []byte(patch)), client.FieldOwner("fighter")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	await.Eventually(t, timeout, func(context.Context) error {
		if got := get(t, ns, "web", &corev1.Service{}).Spec.Ports; fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("service ports %v, want %v", got, want)
		}
		return nil
	})
	t.Logf("the operator sent %d patches to the Service during and after the fight", testenv.Requests(http.MethodPatch, path)-before)
	requireRepairedByPatch(t, path)
}
