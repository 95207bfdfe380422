package mysql_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	resources "github.com/appkeeper/appkeeper/internal/resources/mysql"
	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/testenv"
)

func TestDriftIsRestored(t *testing.T) {
	ns := newNamespace(t)
	createMySQL(t, ns, nil)
	c := childrenExist(t, ns, true)
	password := string(c.secret.Data[appsv1alpha1.SecretKeyPassword])

	sts := c.sts
	sts.Spec.Replicas = ptr.To[int32](3)
	sts.Spec.Template.Spec.Containers[0].Env = nil
	sts.Spec.Template.Spec.SecurityContext.RunAsNonRoot = nil
	sts.Spec.Template.Annotations[resources.ConfigHashAnnotation] = "edited"
	delete(sts.Labels, appsv1alpha1.LabelManagedBy)
	if err := k8s.Update(context.Background(), sts); err != nil {
		t.Fatal(err)
	}
	c.client.Spec.Ports[0].Port = 3307
	if err := k8s.Update(context.Background(), c.client); err != nil {
		t.Fatal(err)
	}
	c.config.Data["appkeeper.cnf"] = "[mysqld]\nskip-grant-tables\n"
	if err := k8s.Update(context.Background(), c.config); err != nil {
		t.Fatal(err)
	}
	delete(c.secret.Labels, appsv1alpha1.LabelName)
	c.secret.Data[appsv1alpha1.SecretKeyHost] = []byte("elsewhere")
	if err := k8s.Update(context.Background(), c.secret); err != nil {
		t.Fatal(err)
	}

	await.Eventually(t, timeout, func(context.Context) error {
		sts := get(t, ns, "db", &appsv1.StatefulSet{})
		pod := sts.Spec.Template.Spec
		cnf := get(t, ns, "db-config", &corev1.ConfigMap{}).Data["appkeeper.cnf"]
		if *sts.Spec.Replicas != 1 || len(pod.Containers[0].Env) == 0 || pod.SecurityContext.RunAsNonRoot == nil ||
			sts.Spec.Template.Annotations[resources.ConfigHashAnnotation] != resources.ConfigHash(cnf) ||
			sts.Labels[appsv1alpha1.LabelManagedBy] != appsv1alpha1.ManagedByValue {
			return fmt.Errorf("statefulset not restored: replicas %d env %d annotations %v labels %v",
				*sts.Spec.Replicas, len(pod.Containers[0].Env), sts.Spec.Template.Annotations, sts.Labels)
		}
		if strings.Contains(cnf, "skip-grant-tables") {
			return fmt.Errorf("my.cnf not restored: %q", cnf)
		}
		if port := get(t, ns, "db", &corev1.Service{}).Spec.Ports[0].Port; port != appsv1alpha1.MySQLPort {
			return fmt.Errorf("service port not restored: %d", port)
		}
		secret := get(t, ns, "db-credentials", &corev1.Secret{})
		if secret.Labels[appsv1alpha1.LabelName] != appsv1alpha1.MySQLAppName || string(secret.Data[appsv1alpha1.SecretKeyHost]) != "db."+ns+".svc" {
			return fmt.Errorf("secret not restored: labels %v host %s", secret.Labels, secret.Data[appsv1alpha1.SecretKeyHost])
		}
		if got := string(secret.Data[appsv1alpha1.SecretKeyPassword]); got != password {
			return fmt.Errorf("password changed from %q to %q", password, got)
		}
		return nil
	})
}

func TestDeletedChildrenAreRecreated(t *testing.T) {
	ns := newNamespace(t)
	createMySQL(t, ns, nil)
	c := childrenExist(t, ns, true)
	old := []client.Object{c.sts, c.headless, c.client, c.config}
	for _, child := range old {
		if err := k8s.Delete(context.Background(), child); err != nil {
			t.Fatal(err)
		}
	}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		for _, child := range old {
			back := child.DeepCopyObject().(client.Object)
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(child), back); err != nil {
				return err
			}
			if back.GetUID() == child.GetUID() {
				return fmt.Errorf("%T %s not replaced yet", child, child.GetName())
			}
		}
		return nil
	})
}

func TestIdleMySQLMakesNoWrites(t *testing.T) {
	ns := newNamespace(t)
	createMySQL(t, ns, nil)
	childrenExist(t, ns, true)
	runServer(t, ns, "db")
	waitMySQL(t, ns, appsv1alpha1.ConditionAvailable, metav1.ConditionTrue, nil)

	versions := func() string {
		return strings.Join([]string{
			get(t, ns, "db", &appsv1alpha1.MySQL{}).ResourceVersion,
			get(t, ns, "db", &appsv1.StatefulSet{}).ResourceVersion,
			get(t, ns, "db", &corev1.Service{}).ResourceVersion,
			get(t, ns, "db-headless", &corev1.Service{}).ResourceVersion,
			get(t, ns, "db-config", &corev1.ConfigMap{}).ResourceVersion,
			get(t, ns, "db-credentials", &corev1.Secret{}).ResourceVersion,
			get(t, ns, "data-db-0", &corev1.PersistentVolumeClaim{}).ResourceVersion,
		}, "/")
	}
	await.RequireUnchanged(t, "an idle MySQL's objects", versions)
}

// TestPassesSendOnlyNeededWrites runs passes that change nothing of the StatefulSet and requires
// that none of them send it: the comparison with what was last applied must match what the API
// server keeps of the claim template, defaults included.
func TestPassesSendOnlyNeededWrites(t *testing.T) {
	ns := newNamespace(t)
	createMySQL(t, ns, nil)
	childrenExist(t, ns, true)
	runServer(t, ns, "db")
	waitMySQL(t, ns, appsv1alpha1.ConditionAvailable, metav1.ConditionTrue, nil)
	path := "/namespaces/" + ns + "/statefulsets/db"
	sent := testenv.Requests(http.MethodPatch, path)
	before := testenv.Reconciles(t, "mysql")
	// The data PVC is watched: each label change starts a pass that has nothing to do.
	for i := range 3 {
		claim := get(t, ns, "data-db-0", &corev1.PersistentVolumeClaim{})
		patch := client.MergeFrom(claim.DeepCopy())
		metav1.SetMetaDataLabel(&claim.ObjectMeta, "touched", fmt.Sprint(i))
		if err := k8s.Patch(context.Background(), claim, patch); err != nil {
			t.Fatal(err)
		}
	}
	await.Eventually(t, timeout, func(context.Context) error {
		if passes := testenv.Reconciles(t, "mysql") - before; passes < 3 {
			return fmt.Errorf("%.0f passes so far", passes)
		}
		return nil
	})
	if got := testenv.Requests(http.MethodPatch, path) - sent; got != 0 {
		t.Errorf("passes that changed nothing sent the StatefulSet %d times", got)
	}
}
