package webserver_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/testenv"
)

// TestNamespaceBeingDeletedIsLeftAlone deletes a namespace that holds a WebServer and a PodSet.
// envtest runs no namespace controller, so the namespace stays Terminating, and the test removes
// children as that controller would: the operator's first attempt to make one again is refused,
// and from then on it writes nothing there and logs no error, however many passes follow.
func TestNamespaceBeingDeletedIsLeftAlone(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	operatorLog := testenv.CaptureLog(t)
	createWebServer(t, ns, 1, "nginx:1.23.1")
	ps := &appsv1alpha1.PodSet{
		ObjectMeta: metav1.ObjectMeta{Name: "cache", Namespace: ns},
		Spec: appsv1alpha1.PodSetSpec{Replicas: ptr.To[int32](2), Template: appsv1alpha1.PodSetTemplate{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "main", Image: "busybox:1.36"}},
		}}},
	}
	if err := k8s.Create(ctx, ps); err != nil {
		t.Fatal(err)
	}
	dep, svc := childrenExist(t, ns)
	pods := &corev1.PodList{}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		if err := k8s.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels(ps.SelectorLabels())); err != nil {
			return err
		}
		if len(pods.Items) != 2 {
			return fmt.Errorf("%d pods of the PodSet", len(pods.Items))
		}
		return nil
	})
	// A namespace goes long after its objects came: the operator tells them from those of a
	// namespace made again under the same name by their creation time, in whole seconds.
	time.Sleep(3 * time.Second)
	conditions := get(t, ns, "web", &appsv1alpha1.WebServer{}).Status.Conditions

	if err := k8s.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	await.Eventually(t, timeout, func(context.Context) error {
		if phase := get(t, "", ns, &corev1.Namespace{}).Status.Phase; phase != corev1.NamespaceTerminating {
			return fmt.Errorf("namespace is %s", phase)
		}
		return nil
	})
	refused := func() int { return testenv.RequestsAnswered(http.StatusForbidden, "/namespaces/"+ns+"/") }
	deleteObject(t, svc)
	await.Eventually(t, timeout, func(context.Context) error {
		if refused() == 0 {
			return errors.New("the operator has not tried to make the Service again")
		}
		return nil
	})

	// More passes of both controllers: the other children go, and a person edits the WebServer.
	passes := testenv.Reconciles(t, "webserver") + testenv.Reconciles(t, "podset")
	deleteObject(t, dep)
	deleteObject(t, &pods.Items[0])
	patchSpec(t, ns, `{"spec":{"replicas":2}}`)
	await.Eventually(t, timeout, func(context.Context) error {
		if now := testenv.Reconciles(t, "webserver") + testenv.Reconciles(t, "podset"); now < passes+3 {
			return fmt.Errorf("%v passes since the first refusal, want 3", now-passes)
		}
		return nil
	})
	// Retries with backoff, were there any, would come within this.
	time.Sleep(2 * time.Second)

	if n := refused(); n != 1 {
		t.Errorf("the API server refused %d writes of the operator in the namespace being deleted, want 1", n)
	}
	if got := get(t, ns, "web", &appsv1alpha1.WebServer{}).Status.Conditions; !reflect.DeepEqual(got, conditions) {
		t.Errorf("the WebServer's conditions changed after its namespace went:\n%v\nwant\n%v", got, conditions)
	}
	var errorLines, told []string
	for _, line := range operatorLog() {
		switch {
		case !strings.Contains(line, `"`+ns+`"`):
		case strings.Contains(line, `"level":"error"`):
			errorLines = append(errorLines, line)
		case strings.Contains(line, "namespace is being deleted"):
			told = append(told, line)
		}
	}
	if len(errorLines) > 0 {
		t.Errorf("the operator logged %d errors about the namespace being deleted, the first:\n%s", len(errorLines), errorLines[0])
	}
	if len(told) != 1 {
		t.Errorf("the operator told %d times that the namespace is being deleted, want once:\n%s", len(told), strings.Join(told, "\n"))
	}
}

func deleteObject(t *testing.T, obj client.Object) {
	t.Helper()
	if err := k8s.Delete(context.Background(), obj); client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
}
