package wordpress_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/admission"
	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/testcluster"
)

const timeout = 20 * time.Second

// newNamespace gives each test a namespace of its own.
func newNamespace(t *testing.T) string {
	t.Helper()
	return testcluster.NewNamespace(t, k8s, "wp")
}

// createWordPress creates the WordPress blog, by default with a MySQL of its own.
func createWordPress(t *testing.T, ns string, mutate func(*appsv1alpha1.WordPress)) *appsv1alpha1.WordPress {
	t.Helper()
	wp := &appsv1alpha1.WordPress{
		ObjectMeta: metav1.ObjectMeta{Name: "blog", Namespace: ns},
		Spec:       appsv1alpha1.WordPressSpec{Database: appsv1alpha1.WordPressDatabase{MySQL: &appsv1alpha1.MySQLSpec{}}},
	}
	if mutate != nil {
		mutate(wp)
	}
	if err := k8s.Create(context.Background(), wp); err != nil {
		t.Fatal(err)
	}
	return wp
}

func createMySQL(t *testing.T, ns, name, database, user string) {
	t.Helper()
	m := &appsv1alpha1.MySQL{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       appsv1alpha1.MySQLSpec{Database: database, User: user},
	}
	if err := k8s.Create(context.Background(), m); err != nil {
		t.Fatal(err)
	}
}

func get[T client.Object](t *testing.T, ns, name string, obj T) T {
	t.Helper()
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

func exists(ctx context.Context, ns, name string, obj client.Object) error {
	return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj)
}

func patchSpec(t *testing.T, ns, patch string) {
	t.Helper()
	wp := &appsv1alpha1.WordPress{ObjectMeta: metav1.ObjectMeta{Name: "blog", Namespace: ns}}
	if err := k8s.Patch(context.Background(), wp, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}
}

// runMySQL does what the StatefulSet controller, the volume provisioner and the kubelet would for the
// MySQL name: it creates its data PVC, binds it, and reports its one member ready.
func runMySQL(t *testing.T, ns, name string) {
	t.Helper()
	ctx := context.Background()
	sts := &appsv1.StatefulSet{}
	await.Eventually(t, timeout, func(ctx context.Context) error { return exists(ctx, ns, name, sts) })
	tmpl := sts.Spec.VolumeClaimTemplates[0]
	claimName := tmpl.Name + "-" + name + "-0"
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: claimName, Namespace: ns, Labels: tmpl.Labels},
		Spec:       tmpl.Spec,
	}
	if err := k8s.Create(ctx, pvc); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		pvc := &corev1.PersistentVolumeClaim{}
		if err := exists(ctx, ns, claimName, pvc); err != nil {
			return err
		}
		pvc.Status.Phase = corev1.ClaimBound
		return k8s.Status().Update(ctx, pvc)
	})
	await.Eventually(t, timeout, func(ctx context.Context) error {
		sts := &appsv1.StatefulSet{}
		if err := exists(ctx, ns, name, sts); err != nil {
			return err
		}
		revision := fmt.Sprintf("%s-%d", name, sts.Generation)
		sts.Status = appsv1.StatefulSetStatus{
			ObservedGeneration: sts.Generation, Replicas: 1, ReadyReplicas: 1, AvailableReplicas: 1, UpdatedReplicas: 1,
			CurrentReplicas: 1, CurrentRevision: revision, UpdateRevision: revision,
		}
		return k8s.Status().Update(ctx, sts)
	})
}

// markDeploymentReady writes the status the Deployment controller would write once every pod of the
// current template is available.
func markDeploymentReady(t *testing.T, ns string) {
	t.Helper()
	await.Eventually(t, timeout, func(ctx context.Context) error {
		dep := &appsv1.Deployment{}
		if err := exists(ctx, ns, "blog", dep); err != nil {
			return err
		}
		n := *dep.Spec.Replicas
		dep.Status = appsv1.DeploymentStatus{
			ObservedGeneration: dep.Generation, Replicas: n, UpdatedReplicas: n, ReadyReplicas: n, AvailableReplicas: n,
		}
		return k8s.Status().Update(ctx, dep)
	})
}

// waitWordPress waits until the WordPress blog reports condType at status for its generation, with
// reason when it is not empty.
func waitWordPress(t *testing.T, ns, condType string, status metav1.ConditionStatus, reason string) *appsv1alpha1.WordPress {
	t.Helper()
	wp := &appsv1alpha1.WordPress{}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		if err := exists(ctx, ns, "blog", wp); err != nil {
			return err
		}
		if err := await.ConditionIs(wp.Status.Conditions, wp.Generation, condType, status); err != nil {
			return err
		}
		if c := meta.FindStatusCondition(wp.Status.Conditions, condType); reason != "" && c.Reason != reason {
			return fmt.Errorf("%s reason = %s (%s), want %s", condType, c.Reason, c.Message, reason)
		}
		return nil
	})
	return wp
}

// noDeployment fails the test if the WordPress blog has a Deployment.
func noDeployment(t *testing.T, ns string) {
	t.Helper()
	if err := exists(context.Background(), ns, "blog", &appsv1.Deployment{}); !apierrors.IsNotFound(err) {
		t.Errorf("get Deployment = %v, want NotFound while the database is not ready", err)
	}
}

func conditionMessage(wp *appsv1alpha1.WordPress, condType string) string {
	if c := meta.FindStatusCondition(wp.Status.Conditions, condType); c != nil {
		return c.Message
	}
	return ""
}

// TestZeroSpecTakesTheDefaults checks that a WordPress made in Go with nothing set gets the API
// server's defaults, a MySQL of its own among them, rather than empty values.
func TestZeroSpecTakesTheDefaults(t *testing.T) {
	ns := newNamespace(t)
	wp := &appsv1alpha1.WordPress{ObjectMeta: metav1.ObjectMeta{Name: "blog", Namespace: ns}}
	if err := k8s.Create(context.Background(), wp); err != nil {
		t.Fatal(err)
	}
	if wp.Spec.Database.MySQL == nil || wp.Spec.Storage.Size.String() != "1Gi" || wp.Spec.Database.MySQL.Storage.Size.String() != "10Gi" {
		t.Errorf("created spec = %+v, want a MySQL of its own, 1Gi for wp-content and 10Gi for the database", wp.Spec)
	}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		return exists(ctx, ns, "blog-mysql", &appsv1alpha1.MySQL{})
	})
}

func TestContentClaimFollowsDeletionPolicy(t *testing.T) {
	ns := newNamespace(t)
	wp := createWordPress(t, ns, func(wp *appsv1alpha1.WordPress) { wp.Spec.DeletionPolicy = appsv1alpha1.DeletionPolicyDelete })
	await.Eventually(t, timeout, func(ctx context.Context) error {
		pvc := &corev1.PersistentVolumeClaim{}
		if err := exists(ctx, ns, "blog-content", pvc); err != nil {
			return err
		}
		if owner := metav1.GetControllerOf(pvc); owner == nil || owner.UID != wp.UID {
			return fmt.Errorf("with the Delete policy the claim's owner is %+v, want the WordPress", owner)
		}
		return nil
	})
	patchSpec(t, ns, `{"spec":{"deletionPolicy":"Retain"}}`)
	await.Eventually(t, timeout, func(context.Context) error {
		if refs := get(t, ns, "blog-content", &corev1.PersistentVolumeClaim{}).OwnerReferences; len(refs) != 0 {
			return fmt.Errorf("with the Retain policy the claim has owners %+v, want none", refs)
		}
		return nil
	})
}

func TestDeletedChildrenAreRecreated(t *testing.T) {
	ns := newNamespace(t)
	createWordPress(t, ns, nil)
	runMySQL(t, ns, "blog-mysql")
	dep, svc := &appsv1.Deployment{}, &corev1.Service{}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		if err := exists(ctx, ns, "blog", dep); err != nil {
			return err
		}
		return exists(ctx, ns, "blog", svc)
	})
	for _, child := range []client.Object{svc, dep} {
		if err := k8s.Delete(context.Background(), child); err != nil {
			t.Fatal(err)
		}
	}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		newDep, newSvc := &appsv1.Deployment{}, &corev1.Service{}
		if err := exists(ctx, ns, "blog", newDep); err != nil {
			return err
		}
		if err := exists(ctx, ns, "blog", newSvc); err != nil {
			return err
		}
		if newDep.UID == dep.UID || newSvc.UID == svc.UID {
			return fmt.Errorf("children not replaced yet")
		}
		return nil
	})
}

func TestIdleWordPressMakesNoWrites(t *testing.T) {
	ns := newNamespace(t)
	createWordPress(t, ns, nil)
	runMySQL(t, ns, "blog-mysql")
	await.Eventually(t, timeout, func(ctx context.Context) error { return exists(ctx, ns, "blog", &appsv1.Deployment{}) })
	markDeploymentReady(t, ns)
	waitWordPress(t, ns, appsv1alpha1.ConditionAvailable, metav1.ConditionTrue, "")

	versions := func() string {
		return strings.Join([]string{
			get(t, ns, "blog", &appsv1alpha1.WordPress{}).ResourceVersion,
			get(t, ns, "blog", &appsv1.Deployment{}).ResourceVersion,
			get(t, ns, "blog", &corev1.Service{}).ResourceVersion,
			get(t, ns, "blog-content", &corev1.PersistentVolumeClaim{}).ResourceVersion,
			get(t, ns, "blog-salts", &corev1.Secret{}).ResourceVersion,
			get(t, ns, "blog-mysql", &appsv1alpha1.MySQL{}).ResourceVersion,
			get(t, ns, "blog-mysql", &appsv1.StatefulSet{}).ResourceVersion,
		}, "/")
	}
	await.RequireUnchanged(t, "an idle WordPress's objects", versions)
}

func TestInvalidSpecsAreRejected(t *testing.T) {
	ns := newNamespace(t)
	admission.RequireInvalidSpecsRejected(t, k8s, ns, "WordPress")
}

func TestInvalidUpdatesAreRejected(t *testing.T) {
	ns := newNamespace(t)
	admission.RequireInvalidUpdatesRejected(t, k8s, ns, "WordPress")
}

func TestValidUpdatesAreAccepted(t *testing.T) {
	ns := newNamespace(t)
	admission.RequireValidUpdatesAccepted(t, k8s, ns, "WordPress")
}

func TestStorageIsImmutable(t *testing.T) {
	ns := newNamespace(t)
	createWordPress(t, ns, nil)
	for _, patch := range []string{
		`{"spec":{"storage":{"size":"5Gi"}}}`,
		`{"spec":{"storage":{"storageClassName":"fast"}}}`,
	} {
		wp := &appsv1alpha1.WordPress{ObjectMeta: metav1.ObjectMeta{Name: "blog", Namespace: ns}}
		err := k8s.Patch(context.Background(), wp, client.RawPatch(types.MergePatchType, []byte(patch)))
		if want := "spec.storage is immutable"; !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("patch %s = %v, want Invalid naming %q", patch, err, want)
		}
	}
	wp := &appsv1alpha1.WordPress{ObjectMeta: metav1.ObjectMeta{Name: "blog", Namespace: ns}}
	err := k8s.Patch(context.Background(), wp, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"database":{"mysql":{"storage":{"size":"50Gi"}}}}}`)))
	if want := "spec.database.mysql.storage is immutable"; !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), want) {
		t.Errorf("patch of the MySQL's storage = %v, want Invalid naming %q", err, want)
	}
}
