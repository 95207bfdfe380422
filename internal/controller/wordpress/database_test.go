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
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	resources "github.com/appkeeper/appkeeper/internal/resources/wordpress"
	"github.com/appkeeper/appkeeper/test/framework/await"
)

func TestSiteStartsOnceItsOwnMySQLIsAvailable(t *testing.T) {
	ns := newNamespace(t)
	wp := createWordPress(t, ns, nil)

	db := &appsv1alpha1.MySQL{}
	await.Eventually(t, timeout, func(ctx context.Context) error { return exists(ctx, ns, "blog-mysql", db) })
	if owner := metav1.GetControllerOf(db); owner == nil || owner.UID != wp.UID || owner.Kind != "WordPress" {
		t.Errorf("MySQL owner = %+v, want the WordPress", owner)
	}
	if db.Spec.Database != "wordpress" || db.Spec.User != "wordpress" || db.Spec.Image != appsv1alpha1.DefaultMySQLImage {
		t.Errorf("MySQL database/user/image = %q/%q/%q", db.Spec.Database, db.Spec.User, db.Spec.Image)
	}
	got := waitWordPress(t, ns, appsv1alpha1.ConditionDatabaseReady, metav1.ConditionFalse, appsv1alpha1.ReasonWaitingForDatabase)
	if err := await.ConditionIs(got.Status.Conditions, got.Generation, appsv1alpha1.ConditionAvailable, metav1.ConditionFalse); err != nil {
		t.Error(err)
	}
	if got.Status.URL != "http://blog."+ns+".svc" {
		t.Errorf("status.url = %q", got.Status.URL)
	}

	// Everything but the Deployment is there while the database starts.
	pvc, svc, salts := &corev1.PersistentVolumeClaim{}, &corev1.Service{}, &corev1.Secret{}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		if err := exists(ctx, ns, "blog-content", pvc); err != nil {
			return err
		}
		if err := exists(ctx, ns, "blog", svc); err != nil {
			return err
		}
		return exists(ctx, ns, "blog-salts", salts)
	})
	for _, child := range []client.Object{svc, salts} {
		if owner := metav1.GetControllerOf(child); owner == nil || owner.UID != wp.UID {
			t.Errorf("%T owner = %+v, want the WordPress", child, owner)
		}
	}
	if size := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; size.Cmp(resource.MustParse("1Gi")) != 0 ||
		len(pvc.Spec.AccessModes) != 1 || pvc.Spec.AccessModes[0] != corev1.ReadWriteOnce {
		t.Errorf("content claim size %s modes %v, want 1Gi ReadWriteOnce", size.String(), pvc.Spec.AccessModes)
	}
	if len(salts.Data) != len(resources.SaltKeys) {
		t.Errorf("salts Secret has keys %d, want %d", len(salts.Data), len(resources.SaltKeys))
	}
	time.Sleep(time.Second)
	noDeployment(t, ns)

	// The MySQL becoming Available is the only trigger the site needs.
	runMySQL(t, ns, "blog-mysql")
	dep := &appsv1.Deployment{}
	await.Eventually(t, timeout, func(ctx context.Context) error { return exists(ctx, ns, "blog", dep) })
	if owner := metav1.GetControllerOf(dep); owner == nil || owner.UID != wp.UID {
		t.Errorf("Deployment owner = %+v, want the WordPress", owner)
	}
	pod := dep.Spec.Template.Spec
	env := map[string]corev1.EnvVar{}
	for _, e := range pod.Containers[0].Env {
		env[e.Name] = e
		if e.Value != "" {
			t.Errorf("env %s has a literal value; every database setting and salt comes from a Secret", e.Name)
		}
	}
	refs := map[string][2]string{
		"WORDPRESS_DB_HOST":     {"blog-mysql-credentials", appsv1alpha1.SecretKeyHost},
		"WORDPRESS_DB_NAME":     {"blog-mysql-credentials", appsv1alpha1.SecretKeyDatabase},
		"WORDPRESS_DB_USER":     {"blog-mysql-credentials", appsv1alpha1.SecretKeyUser},
		"WORDPRESS_DB_PASSWORD": {"blog-mysql-credentials", appsv1alpha1.SecretKeyPassword},
	}
	for _, k := range resources.SaltKeys {
		refs[k] = [2]string{"blog-salts", k}
	}
	for name, want := range refs {
		e := env[name]
		if e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil || e.ValueFrom.SecretKeyRef.Name != want[0] || e.ValueFrom.SecretKeyRef.Key != want[1] {
			t.Errorf("env %s = %+v, want a secretKeyRef to %s/%s", name, e, want[0], want[1])
		}
	}
	if len(pod.Volumes) != 1 || pod.Volumes[0].PersistentVolumeClaim == nil || pod.Volumes[0].PersistentVolumeClaim.ClaimName != "blog-content" {
		t.Errorf("volumes = %+v, want the claim blog-content", pod.Volumes)
	}
	// The credentials Secret holds what the site reads from it.
	creds := get(t, ns, "blog-mysql-credentials", &corev1.Secret{})
	if string(creds.Data[appsv1alpha1.SecretKeyDatabase]) != "wordpress" || string(creds.Data[appsv1alpha1.SecretKeyUser]) != "wordpress" ||
		string(creds.Data[appsv1alpha1.SecretKeyHost]) != "blog-mysql."+ns+".svc" {
		t.Errorf("credentials = %q", creds.Data)
	}

	markDeploymentReady(t, ns)
	got = waitWordPress(t, ns, appsv1alpha1.ConditionAvailable, metav1.ConditionTrue, "")
	for condType, status := range map[string]metav1.ConditionStatus{
		appsv1alpha1.ConditionDatabaseReady: metav1.ConditionTrue,
		appsv1alpha1.ConditionProgressing:   metav1.ConditionFalse,
		appsv1alpha1.ConditionDegraded:      metav1.ConditionFalse,
	} {
		if err := await.ConditionIs(got.Status.Conditions, got.Generation, condType, status); err != nil {
			t.Error(err)
		}
	}
	if got.Status.Image != appsv1alpha1.DefaultWordPressImage || got.Status.ReadyReplicas != 1 || got.Status.URL != "http://blog."+ns+".svc" {
		t.Errorf("status = %+v", got.Status)
	}

	// A new image rolls the site; the salts stay, or every user would be logged out.
	patchSpec(t, ns, `{"spec":{"image":"wordpress:6.8.2-php8.3-apache"}}`)
	await.Eventually(t, timeout, func(context.Context) error {
		if image := get(t, ns, "blog", &appsv1.Deployment{}).Spec.Template.Spec.Containers[0].Image; image != "wordpress:6.8.2-php8.3-apache" {
			return fmt.Errorf("deployment image = %s", image)
		}
		return nil
	})
	after := get(t, ns, "blog-salts", &corev1.Secret{})
	for k, v := range salts.Data {
		if string(after.Data[k]) != string(v) {
			t.Errorf("salt %s changed", k)
		}
	}
}

func TestMySQLRefToAMissingMySQL(t *testing.T) {
	ns := newNamespace(t)
	createWordPress(t, ns, func(wp *appsv1alpha1.WordPress) {
		wp.Spec.Database = appsv1alpha1.WordPressDatabase{MySQLRef: &appsv1alpha1.LocalObjectReference{Name: "shared"}}
	})
	wp := waitWordPress(t, ns, appsv1alpha1.ConditionDatabaseReady, metav1.ConditionFalse, appsv1alpha1.ReasonWaitingForDatabase)
	if msg := conditionMessage(wp, appsv1alpha1.ConditionDatabaseReady); !strings.Contains(msg, "spec.database.mysqlRef") || !strings.Contains(msg, "shared") {
		t.Errorf("DatabaseReady message = %q, want it to name spec.database.mysqlRef and the MySQL", msg)
	}
	time.Sleep(time.Second)
	noDeployment(t, ns)
	if err := exists(context.Background(), ns, "shared", &appsv1alpha1.MySQL{}); !apierrors.IsNotFound(err) {
		t.Errorf("get MySQL shared = %v, want NotFound: a referenced MySQL is not the site's to create", err)
	}

	// The MySQL appears and becomes Available: the site starts on it.
	createMySQL(t, ns, "shared", "blog", "blog")
	runMySQL(t, ns, "shared")
	dep := &appsv1.Deployment{}
	await.Eventually(t, timeout, func(ctx context.Context) error { return exists(ctx, ns, "blog", dep) })
	for _, e := range dep.Spec.Template.Spec.Containers[0].Env {
		if e.Name == "WORDPRESS_DB_PASSWORD" && (e.ValueFrom == nil || e.ValueFrom.SecretKeyRef.Name != "shared-credentials") {
			t.Errorf("env %s = %+v, want the password of shared-credentials", e.Name, e)
		}
	}
	waitWordPress(t, ns, appsv1alpha1.ConditionDatabaseReady, metav1.ConditionTrue, "")
}

func TestMySQLRefToAMySQLWithItsOwnSecret(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "db-passwords", Namespace: ns},
		Data: map[string][]byte{
			appsv1alpha1.SecretKeyRootPassword: []byte("root-secret"), appsv1alpha1.SecretKeyPassword: []byte("user-secret"),
		},
	}
	if err := k8s.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	m := &appsv1alpha1.MySQL{
		ObjectMeta: metav1.ObjectMeta{Name: "shared", Namespace: ns},
		Spec: appsv1alpha1.MySQLSpec{
			Database: "site", User: "site", CredentialsSecretRef: &appsv1alpha1.SecretReference{Name: "db-passwords"},
		},
	}
	if err := k8s.Create(ctx, m); err != nil {
		t.Fatal(err)
	}
	runMySQL(t, ns, "shared")
	createWordPress(t, ns, func(wp *appsv1alpha1.WordPress) {
		wp.Spec.Database = appsv1alpha1.WordPressDatabase{MySQLRef: &appsv1alpha1.LocalObjectReference{Name: "shared"}}
	})
	dep := &appsv1.Deployment{}
	await.Eventually(t, timeout, func(ctx context.Context) error { return exists(ctx, ns, "blog", dep) })
	env := map[string]corev1.EnvVar{}
	for _, e := range dep.Spec.Template.Spec.Containers[0].Env {
		env[e.Name] = e
	}
	for name, want := range map[string]string{"WORDPRESS_DB_HOST": "shared." + ns + ".svc", "WORDPRESS_DB_NAME": "site", "WORDPRESS_DB_USER": "site"} {
		if env[name].Value != want {
			t.Errorf("env %s = %+v, want %q", name, env[name], want)
		}
	}
	if e := env["WORDPRESS_DB_PASSWORD"]; e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil ||
		e.ValueFrom.SecretKeyRef.Name != "db-passwords" || e.ValueFrom.SecretKeyRef.Key != appsv1alpha1.SecretKeyPassword {
		t.Errorf("env WORDPRESS_DB_PASSWORD = %+v, want a secretKeyRef to db-passwords/password", e)
	}
}

func TestMySQLRefWithoutDatabaseOrUser(t *testing.T) {
	ns := newNamespace(t)
	createMySQL(t, ns, "bare", "", "")
	runMySQL(t, ns, "bare")
	createWordPress(t, ns, func(wp *appsv1alpha1.WordPress) {
		wp.Spec.Database = appsv1alpha1.WordPressDatabase{MySQLRef: &appsv1alpha1.LocalObjectReference{Name: "bare"}}
	})
	wp := waitWordPress(t, ns, appsv1alpha1.ConditionDatabaseReady, metav1.ConditionFalse, appsv1alpha1.ReasonDatabaseMisconfigured)
	if err := await.ConditionIs(wp.Status.Conditions, wp.Generation, appsv1alpha1.ConditionDegraded, metav1.ConditionTrue); err != nil {
		t.Error(err)
	}
	if msg := conditionMessage(wp, appsv1alpha1.ConditionDatabaseReady); !strings.Contains(msg, "spec.database") || !strings.Contains(msg, "spec.user") {
		t.Errorf("DatabaseReady message = %q, want it to name the missing fields", msg)
	}
	noDeployment(t, ns)
}

func TestOwnedMySQLIsKeptAsSpecified(t *testing.T) {
	ns := newNamespace(t)
	createWordPress(t, ns, func(wp *appsv1alpha1.WordPress) {
		wp.Spec.Database.MySQL.Config = []string{"max_connections=50"}
	})
	db := &appsv1alpha1.MySQL{}
	await.Eventually(t, timeout, func(ctx context.Context) error { return exists(ctx, ns, "blog-mysql", db) })

	// A hand edit, as kubectl makes it: a patch, which the MySQL's own status writes cannot conflict with.
	before := db.DeepCopy()
	db.Spec.Config = []string{"max_connections=5000"}
	db.Spec.DeletionPolicy = appsv1alpha1.DeletionPolicyDelete
	if err := k8s.Patch(context.Background(), db, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
	await.Eventually(t, timeout, func(context.Context) error {
		got := get(t, ns, "blog-mysql", &appsv1alpha1.MySQL{})
		if len(got.Spec.Config) != 1 || got.Spec.Config[0] != "max_connections=50" || got.Spec.DeletionPolicy != appsv1alpha1.DeletionPolicyRetain {
			return fmt.Errorf("MySQL spec not restored: config %q deletionPolicy %s", got.Spec.Config, got.Spec.DeletionPolicy)
		}
		return nil
	})

	// The WordPress's own spec change reaches its MySQL.
	patchSpec(t, ns, `{"spec":{"database":{"mysql":{"config":["max_connections=80"]}}}}`)
	await.Eventually(t, timeout, func(context.Context) error {
		if got := get(t, ns, "blog-mysql", &appsv1alpha1.MySQL{}); len(got.Spec.Config) != 1 || got.Spec.Config[0] != "max_connections=80" {
			return fmt.Errorf("MySQL config = %q", got.Spec.Config)
		}
		return nil
	})

	if err := k8s.Delete(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		back := &appsv1alpha1.MySQL{}
		if err := exists(ctx, ns, "blog-mysql", back); err != nil {
			return err
		}
		if back.UID == db.UID {
			return fmt.Errorf("MySQL not replaced yet")
		}
		return nil
	})
}

// TestAnotherMySQLOfTheSameNameIsLeftAlone checks that a site never takes over a MySQL it did not
// create: owning it would hand that database to the garbage collector along with the site.
func TestAnotherMySQLOfTheSameNameIsLeftAlone(t *testing.T) {
	ns := newNamespace(t)
	createMySQL(t, ns, "blog-mysql", "wordpress", "wordpress")
	createWordPress(t, ns, nil)
	wp := waitWordPress(t, ns, appsv1alpha1.ConditionDatabaseReady, metav1.ConditionFalse, appsv1alpha1.ReasonDatabaseMisconfigured)
	if msg := conditionMessage(wp, appsv1alpha1.ConditionDatabaseReady); !strings.Contains(msg, "blog-mysql") || !strings.Contains(msg, "spec.database.mysqlRef") {
		t.Errorf("DatabaseReady message = %q, want it to name the MySQL and spec.database.mysqlRef", msg)
	}
	if err := await.ConditionIs(wp.Status.Conditions, wp.Generation, appsv1alpha1.ConditionDegraded, metav1.ConditionTrue); err != nil {
		t.Error(err)
	}
	time.Sleep(time.Second)
	if refs := get(t, ns, "blog-mysql", &appsv1alpha1.MySQL{}).OwnerReferences; len(refs) != 0 {
		t.Errorf("the MySQL got owners %+v, want none", refs)
	}
	noDeployment(t, ns)
}

// TestOwnedMySQLLosesWhatTheSpecNoLongerSets checks that a field removed from the inline MySQL spec
// is removed from the MySQL too, not only changed ones: a node selector left behind would keep the
// database on nodes the user no longer wants.
func TestOwnedMySQLLosesWhatTheSpecNoLongerSets(t *testing.T) {
	ns := newNamespace(t)
	createWordPress(t, ns, func(wp *appsv1alpha1.WordPress) {
		wp.Spec.Database.MySQL.NodeSelector = map[string]string{"disk": "ssd"}
		wp.Spec.Database.MySQL.Config = []string{"max_connections=50"}
		wp.Spec.Database.MySQL.Resources = corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}
		wp.Spec.Database.MySQL.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	})
	await.Eventually(t, timeout, func(ctx context.Context) error {
		db := &appsv1alpha1.MySQL{}
		if err := exists(ctx, ns, "blog-mysql", db); err != nil {
			return err
		}
		if db.Spec.NodeSelector["disk"] != "ssd" || len(db.Spec.Config) != 1 || db.Spec.Resources.Limits.Memory().IsZero() ||
			len(db.Spec.Tolerations) != 1 || db.Spec.Tolerations[0].Effect != corev1.TaintEffectNoSchedule {
			return fmt.Errorf("MySQL spec = %+v", db.Spec)
		}
		return nil
	})

	patchSpec(t, ns, `{"spec":{"database":{"mysql":{"nodeSelector":null,"config":null,"resources":null,`+
		`"tolerations":[{"key":"dedicated","operator":"Exists"}]}}}}`)
	await.Eventually(t, timeout, func(context.Context) error {
		db := get(t, ns, "blog-mysql", &appsv1alpha1.MySQL{})
		if len(db.Spec.NodeSelector) != 0 || len(db.Spec.Config) != 0 || len(db.Spec.Resources.Limits) != 0 ||
			len(db.Spec.Tolerations) != 1 || db.Spec.Tolerations[0].Effect != "" {
			return fmt.Errorf("MySQL still holds removed fields: nodeSelector %v config %q resources %v tolerations %+v",
				db.Spec.NodeSelector, db.Spec.Config, db.Spec.Resources, db.Spec.Tolerations)
		}
		return nil
	})
}
