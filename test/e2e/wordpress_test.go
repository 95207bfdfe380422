//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/await"
)

// blog is the classic example: a WordPress with a MySQL of its own.
const blog = `
apiVersion: apps.appkeeper.dev/v1alpha1
kind: WordPress
metadata:
  name: blog
spec:
  database:
    mysql:
      storage:
        size: 5Gi
`

func TestWordPressWithItsOwnMySQL(t *testing.T) {
	ns := newNamespace(t, "wp")
	created := time.Now()
	kubectl(t, blog, "apply", "-n", ns, "-f", "-")
	waitWordPress(t, ns)
	t.Logf("WordPress and its MySQL Available %s after the WordPress was created", time.Since(created).Round(time.Millisecond))

	// Once Available, nothing the site is made of changes while no one touches it.
	versions := func() string {
		var v []string
		for name, obj := range map[string]client.Object{
			"blog": &appsv1alpha1.WordPress{}, "blog-mysql": &appsv1alpha1.MySQL{}, "blog-mysql-config": &corev1.ConfigMap{},
			"blog-content": &corev1.PersistentVolumeClaim{}, "data-blog-mysql-0": &corev1.PersistentVolumeClaim{},
			"blog-salts": &corev1.Secret{}, "blog-mysql-credentials": &corev1.Secret{},
		} {
			v = append(v, name+"="+get(t, ns, name, obj).GetResourceVersion())
		}
		v = append(v, "deployment="+get(t, ns, "blog", &appsv1.Deployment{}).ResourceVersion,
			"statefulset="+get(t, ns, "blog-mysql", &appsv1.StatefulSet{}).ResourceVersion,
			"service="+get(t, ns, "blog", &corev1.Service{}).ResourceVersion)
		slices.Sort(v)
		return strings.Join(v, " ")
	}
	time.Sleep(time.Second)
	before := versions()
	for range 3 {
		time.Sleep(time.Second)
		if after := versions(); after != before {
			t.Fatalf("an idle WordPress's objects changed:\n%s\n%s", before, after)
		}
	}

	out := kubectl(t, "", "get", "-n", ns, "appkeeper", "-o", "wide")
	if !strings.Contains(out, "blog-mysql") || !strings.Contains(out, "http://blog."+ns+".svc") {
		t.Errorf("kubectl get appkeeper:\n%s", out)
	}

	secrets := secretValues(t, ns, "blog-mysql-credentials", appsv1alpha1.SecretKeyRootPassword, appsv1alpha1.SecretKeyPassword)
	salts := secretValues(t, ns, "blog-salts")
	noSecretsOutsideSecrets(t, ns, append(secrets, salts...))

	// Deleting the site keeps its data: the database's volume and passwords, and wp-content.
	claims := map[string]types.UID{}
	for _, name := range []string{"data-blog-mysql-0", "blog-content"} {
		claims[name] = get(t, ns, name, &corev1.PersistentVolumeClaim{}).UID
	}
	kubectl(t, "", "delete", "-n", ns, "wordpress", "blog")
	await.Eventually(t, timeout, func(ctx context.Context) error {
		for name, obj := range map[string]client.Object{
			"blog-mysql": &appsv1alpha1.MySQL{}, "blog": &appsv1.Deployment{}, "blog-salts": &corev1.Secret{},
		} {
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj); err == nil {
				return fmt.Errorf("%T %s still there", obj, name)
			} else if !apierrors.IsNotFound(err) {
				return err
			}
		}
		return noneLeft(ctx, ns, &appsv1.StatefulSetList{}, &corev1.PodList{}, &corev1.ServiceList{})
	})
	// The garbage collector has taken everything owned; the kept objects stay.
	time.Sleep(2 * time.Second)
	for name, uid := range claims {
		pvc := get(t, ns, name, &corev1.PersistentVolumeClaim{})
		if pvc.UID != uid || pvc.DeletionTimestamp != nil || pvc.Status.Phase != corev1.ClaimBound {
			t.Errorf("claim %s: uid %s (was %s), deleting %v, phase %s", name, pvc.UID, uid, pvc.DeletionTimestamp, pvc.Status.Phase)
		}
	}
	if got := secretValues(t, ns, "blog-mysql-credentials", appsv1alpha1.SecretKeyRootPassword, appsv1alpha1.SecretKeyPassword); !equal(got, secrets) {
		t.Errorf("the credentials changed while the site was deleted")
	}

	// The same site again takes over the same volumes with the passwords that match them.
	created = time.Now()
	kubectl(t, blog, "apply", "-n", ns, "-f", "-")
	waitWordPress(t, ns)
	t.Logf("WordPress re-created on its kept volumes Available %s after it was created", time.Since(created).Round(time.Millisecond))
	for name, uid := range claims {
		if got := get(t, ns, name, &corev1.PersistentVolumeClaim{}).UID; got != uid {
			t.Errorf("claim %s has uid %s, want the kept claim %s", name, got, uid)
		}
	}
	if got := secretValues(t, ns, "blog-mysql-credentials", appsv1alpha1.SecretKeyRootPassword, appsv1alpha1.SecretKeyPassword); !equal(got, secrets) {
		t.Errorf("the re-created MySQL has new passwords; its data volume holds accounts with the old ones")
	}
	if claim := volumeClaim(get(t, ns, "blog-mysql-0", &corev1.Pod{})); claim != "data-blog-mysql-0" {
		t.Errorf("the MySQL pod mounts claim %q, want data-blog-mysql-0", claim)
	}
	pods := &corev1.PodList{}
	if err := k8s.List(context.Background(), pods, client.InNamespace(ns), client.MatchingLabels{appsv1alpha1.LabelName: appsv1alpha1.WordPressAppName}); err != nil {
		t.Fatal(err)
	}
	for _, pod := range pods.Items {
		if claim := volumeClaim(&pod); claim != "blog-content" {
			t.Errorf("WordPress pod %s mounts claim %q, want blog-content", pod.Name, claim)
		}
	}

	// Applied again at once, before the garbage collector has taken the former site's MySQL, the
	// site waits for it to go and then starts on the same data.
	kubectl(t, "", "delete", "-n", ns, "wordpress", "blog")
	kubectl(t, blog, "apply", "-n", ns, "-f", "-")
	waitWordPress(t, ns)
	for name, uid := range claims {
		if got := get(t, ns, name, &corev1.PersistentVolumeClaim{}).UID; got != uid {
			t.Errorf("claim %s has uid %s after a quick re-create, want the kept claim %s", name, got, uid)
		}
	}
	if got := secretValues(t, ns, "blog-mysql-credentials", appsv1alpha1.SecretKeyRootPassword, appsv1alpha1.SecretKeyPassword); !equal(got, secrets) {
		t.Errorf("a quick re-create changed the passwords")
	}
	wp := get(t, ns, "blog", &appsv1alpha1.WordPress{})
	if owner := metav1.GetControllerOf(get(t, ns, "blog-mysql", &appsv1alpha1.MySQL{})); owner == nil || owner.UID != wp.UID {
		t.Errorf("MySQL owner = %+v, want the new WordPress", owner)
	}
}

// waitWordPress waits until the WordPress blog and its MySQL blog-mysql are Available, their pods
// Running and Ready, their volumes Bound and the site's Service in place.
func waitWordPress(t *testing.T, ns string) {
	t.Helper()
	waitMySQL(t, ns, "blog-mysql", appsv1alpha1.DefaultMySQLImage)
	await.Eventually(t, timeout, func(ctx context.Context) error {
		wp := &appsv1alpha1.WordPress{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "blog"}, wp); err != nil {
			return err
		}
		for condType, status := range map[string]metav1.ConditionStatus{
			appsv1alpha1.ConditionAvailable:     metav1.ConditionTrue,
			appsv1alpha1.ConditionDatabaseReady: metav1.ConditionTrue,
			appsv1alpha1.ConditionProgressing:   metav1.ConditionFalse,
			appsv1alpha1.ConditionDegraded:      metav1.ConditionFalse,
		} {
			if err := await.ConditionIs(wp.Status.Conditions, wp.Generation, condType, status); err != nil {
				return fmt.Errorf("WordPress: %w", err)
			}
		}
		if wp.Status.ReadyReplicas != 1 || wp.Status.Image != appsv1alpha1.DefaultWordPressImage || wp.Status.URL != "http://blog."+ns+".svc" {
			return fmt.Errorf("WordPress status ready %d image %q url %q", wp.Status.ReadyReplicas, wp.Status.Image, wp.Status.URL)
		}
		dep := &appsv1.Deployment{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "blog"}, dep); err != nil {
			return err
		}
		if dep.Status.AvailableReplicas != 1 {
			return fmt.Errorf("deployment has %d available replicas", dep.Status.AvailableReplicas)
		}
		pvc := &corev1.PersistentVolumeClaim{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "blog-content"}, pvc); err != nil {
			return err
		}
		if pvc.Status.Phase != corev1.ClaimBound {
			return fmt.Errorf("claim blog-content is %s", pvc.Status.Phase)
		}
		return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "blog"}, &corev1.Service{})
	})
}

// noSecretsOutsideSecrets fails the test when any of values appears in the operator's log, in an
// Event of the namespace, or in an appkeeper resource or workload of the namespace.
func noSecretsOutsideSecrets(t *testing.T, ns string, values []string) {
	t.Helper()
	log, err := os.ReadFile(operatorLog)
	if err != nil {
		t.Fatal(err)
	}
	if len(log) == 0 {
		t.Errorf("the operator's log %s is empty", operatorLog)
	}
	places := map[string]string{
		"the operator's log":  string(log),
		"appkeeper resources": kubectl(t, "", "get", "-n", ns, "appkeeper", "-o", "json"),
		"workloads":           kubectl(t, "", "get", "-n", ns, "deployments,statefulsets,pods,configmaps", "-o", "json"),
	}
	for name, list := range map[string]client.ObjectList{"events": &eventsv1.EventList{}, "core events": &corev1.EventList{}} {
		if err := k8s.List(context.Background(), list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		raw, err := json.Marshal(list)
		if err != nil {
			t.Fatal(err)
		}
		places[name] = string(raw)
	}
	if !strings.Contains(places["appkeeper resources"], `"kind": "WordPress"`) || !strings.Contains(places["appkeeper resources"], `"kind": "MySQL"`) {
		t.Errorf("kubectl get appkeeper listed no WordPress or no MySQL:\n%s", places["appkeeper resources"])
	}
	for place, text := range places {
		for _, v := range values {
			if strings.Contains(text, v) {
				t.Errorf("a generated secret value appears in %s", place)
			}
		}
	}
}

// secretValues returns the values of keys in the Secret name, or of all its keys when none are given.
func secretValues(t *testing.T, ns, name string, keys ...string) []string {
	t.Helper()
	secret := get(t, ns, name, &corev1.Secret{})
	if len(keys) == 0 {
		for k := range secret.Data {
			keys = append(keys, k)
		}
	}
	values := make([]string, 0, len(keys))
	for _, k := range keys {
		if len(secret.Data[k]) < 20 {
			t.Fatalf("Secret %s key %s = %q, want a long generated value", name, k, secret.Data[k])
		}
		values = append(values, string(secret.Data[k]))
	}
	return values
}

func equal(a, b []string) bool {
	return strings.Join(a, "\n") == strings.Join(b, "\n")
}

func get[T client.Object](t *testing.T, ns, name string, obj T) T {
	t.Helper()
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

// volumeClaim is the claim the pod's first PVC volume names, or empty.
func volumeClaim(pod *corev1.Pod) string {
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			return v.PersistentVolumeClaim.ClaimName
		}
	}
	return ""
}
