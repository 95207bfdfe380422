package mysql_test

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
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	resources "github.com/appkeeper/appkeeper/internal/resources/mysql"
	"github.com/appkeeper/appkeeper/test/framework/admission"
	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/kubesim"
	"github.com/appkeeper/appkeeper/test/framework/testcluster"
)

const timeout = 20 * time.Second

// newNamespace gives each test a namespace of its own.
func newNamespace(t *testing.T) string {
	t.Helper()
	return testcluster.NewNamespace(t, k8s, "my")
}

func createMySQL(t *testing.T, ns string, mutate func(*appsv1alpha1.MySQL)) *appsv1alpha1.MySQL {
	t.Helper()
	m := &appsv1alpha1.MySQL{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns},
		Spec:       appsv1alpha1.MySQLSpec{Database: "shop", User: "shop"},
	}
	if mutate != nil {
		mutate(m)
	}
	if err := k8s.Create(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	return m
}

// createCredentialsSecret creates the Secret name with both passwords, for a MySQL to reference.
func createCredentialsSecret(t *testing.T, ns, name string) {
	t.Helper()
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Data: map[string][]byte{
			appsv1alpha1.SecretKeyRootPassword: []byte("root-secret"), appsv1alpha1.SecretKeyPassword: []byte("user-secret"),
		},
	}
	if err := k8s.Create(context.Background(), secret); err != nil {
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

func patchSpec(t *testing.T, ns, patch string) {
	t.Helper()
	m := &appsv1alpha1.MySQL{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns}}
	if err := k8s.Patch(context.Background(), m, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}
}

// children are the objects the MySQL db makes.
type children struct {
	sts              *appsv1.StatefulSet
	headless, client *corev1.Service
	config           *corev1.ConfigMap
	secret           *corev1.Secret
}

// childrenExist waits for every child of the MySQL db: with a referenced Secret, secret stays nil.
func childrenExist(t *testing.T, ns string, generatedSecret bool) children {
	t.Helper()
	c := children{&appsv1.StatefulSet{}, &corev1.Service{}, &corev1.Service{}, &corev1.ConfigMap{}, nil}
	if generatedSecret {
		c.secret = &corev1.Secret{}
	}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		for name, obj := range map[string]client.Object{
			"db": c.sts, "db-headless": c.headless, "db-config": c.config,
		} {
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
				return err
			}
		}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db"}, c.client); err != nil {
			return err
		}
		if c.secret != nil {
			return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db-credentials"}, c.secret)
		}
		return nil
	})
	return c
}

// runServer plays the StatefulSet controller, the provisioner and the kubelet for the server.
func runServer(t *testing.T, ns, name string) {
	t.Helper()
	kubesim.RunStatefulSet(t, k8s, ns, name, timeout)
}

func markStatefulSetReady(t *testing.T, ns, name string) {
	t.Helper()
	kubesim.MarkStatefulSetReady(t, k8s, ns, name, timeout)
}

// waitMySQL waits until the MySQL db reports condType at status for its generation, then until
// check, when given, passes on it.
func waitMySQL(t *testing.T, ns, condType string, status metav1.ConditionStatus, check func(*appsv1alpha1.MySQL) error) *appsv1alpha1.MySQL {
	t.Helper()
	m := &appsv1alpha1.MySQL{}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db"}, m); err != nil {
			return err
		}
		if err := await.ConditionIs(m.Status.Conditions, m.Generation, condType, status); err != nil {
			return err
		}
		if check != nil {
			return check(m)
		}
		return nil
	})
	return m
}

func reasonIs(condType, reason string) func(*appsv1alpha1.MySQL) error {
	return func(m *appsv1alpha1.MySQL) error {
		if c := meta.FindStatusCondition(m.Status.Conditions, condType); c.Reason != reason {
			return fmt.Errorf("%s reason = %s (%s), want %s", condType, c.Reason, c.Message, reason)
		}
		return nil
	}
}

func container(sts *appsv1.StatefulSet) corev1.Container {
	for _, c := range sts.Spec.Template.Spec.Containers {
		if c.Name == resources.ContainerName {
			return c
		}
	}
	return corev1.Container{}
}

func TestChildrenAreOwnedAndStatusFollowsThem(t *testing.T) {
	ns := newNamespace(t)
	m := createMySQL(t, ns, func(m *appsv1alpha1.MySQL) { m.Spec.Config = []string{"max_connections=200"} })
	c := childrenExist(t, ns, true)
	for _, child := range []client.Object{c.sts, c.headless, c.client, c.config} {
		owner := metav1.GetControllerOf(child)
		if owner == nil || owner.UID != m.UID || owner.Kind != "MySQL" {
			t.Errorf("%T %s owner = %+v, want the MySQL", child, child.GetName(), owner)
		}
	}
	if refs := c.secret.OwnerReferences; len(refs) != 0 {
		t.Errorf("with the Retain policy the Secret has owners %+v, want none", refs)
	}

	sts := c.sts
	if *sts.Spec.Replicas != 1 || sts.Spec.ServiceName != "db-headless" || container(sts).Image != appsv1alpha1.DefaultMySQLImage {
		t.Errorf("statefulset replicas/serviceName/image = %d/%s/%s", *sts.Spec.Replicas, sts.Spec.ServiceName, container(sts).Image)
	}
	if p := sts.Spec.PersistentVolumeClaimRetentionPolicy; p == nil || p.WhenDeleted != appsv1.RetainPersistentVolumeClaimRetentionPolicyType {
		t.Errorf("retention policy = %+v, want Retain when deleted", p)
	}
	if len(sts.Spec.VolumeClaimTemplates) != 1 {
		t.Fatalf("volumeClaimTemplates = %+v", sts.Spec.VolumeClaimTemplates)
	}
	claim := sts.Spec.VolumeClaimTemplates[0]
	if size := claim.Spec.Resources.Requests[corev1.ResourceStorage]; claim.Name != resources.DataVolume || size.Cmp(resource.MustParse("10Gi")) != 0 ||
		len(claim.Spec.AccessModes) != 1 || claim.Spec.AccessModes[0] != corev1.ReadWriteOnce {
		t.Errorf("claim template %s size %s modes %v, want data, 10Gi, ReadWriteOnce", claim.Name, size.String(), claim.Spec.AccessModes)
	}
	if c.headless.Spec.ClusterIP != corev1.ClusterIPNone || c.client.Spec.ClusterIP == corev1.ClusterIPNone ||
		c.client.Spec.Ports[0].Port != appsv1alpha1.MySQLPort || c.client.Spec.Selector[appsv1alpha1.LabelInstance] != "db" {
		t.Errorf("services: headless clusterIP %s, client clusterIP %s port %d selector %v",
			c.headless.Spec.ClusterIP, c.client.Spec.ClusterIP, c.client.Spec.Ports[0].Port, c.client.Spec.Selector)
	}
	cnf := c.config.Data["appkeeper.cnf"]
	if !strings.HasPrefix(cnf, "[mysqld]\n") || !strings.Contains(cnf, "\nmax_connections=200\n") {
		t.Errorf("my.cnf = %q", cnf)
	}
	if got := sts.Spec.Template.Annotations[resources.ConfigHashAnnotation]; got != resources.ConfigHash(cnf) {
		t.Errorf("config hash annotation = %q, want the hash of the ConfigMap's my.cnf %q", got, resources.ConfigHash(cnf))
	}
	for _, key := range []string{appsv1alpha1.SecretKeyRootPassword, appsv1alpha1.SecretKeyPassword} {
		if len(c.secret.Data[key]) < 20 {
			t.Errorf("generated %s = %q, want a long random password", key, c.secret.Data[key])
		}
	}
	if string(c.secret.Data[appsv1alpha1.SecretKeyUser]) != "shop" || string(c.secret.Data[appsv1alpha1.SecretKeyDatabase]) != "shop" ||
		string(c.secret.Data[appsv1alpha1.SecretKeyHost]) != "db."+ns+".svc" || string(c.secret.Data[appsv1alpha1.SecretKeyPort]) != "3306" {
		t.Errorf("secret coordinates = %q", c.secret.Data)
	}

	m = waitMySQL(t, ns, appsv1alpha1.ConditionAvailable, metav1.ConditionFalse, nil)
	if m.Status.Endpoint != "db."+ns+".svc:3306" || m.Status.SecretName != "db-credentials" || m.Status.ObservedGeneration != m.Generation {
		t.Errorf("status = %+v", m.Status)
	}

	runServer(t, ns, "db")
	m = waitMySQL(t, ns, appsv1alpha1.ConditionAvailable, metav1.ConditionTrue, nil)
	if err := await.ConditionIs(m.Status.Conditions, m.Generation, appsv1alpha1.ConditionProgressing, metav1.ConditionFalse); err != nil {
		t.Error(err)
	}
	if err := await.ConditionIs(m.Status.Conditions, m.Generation, appsv1alpha1.ConditionDegraded, metav1.ConditionFalse); err != nil {
		t.Error(err)
	}
	if m.Status.Image != appsv1alpha1.DefaultMySQLImage || m.Status.ReadyReplicas != 1 {
		t.Errorf("status image/readyReplicas = %s/%d", m.Status.Image, m.Status.ReadyReplicas)
	}
	await.WantEvents(t, k8s, ns, timeout, appsv1alpha1.EventCreated)
}

func TestAvailableOnlyWithTheDataVolumeBound(t *testing.T) {
	ns := newNamespace(t)
	createMySQL(t, ns, nil)
	childrenExist(t, ns, true)
	markStatefulSetReady(t, ns, "db")
	waitMySQL(t, ns, appsv1alpha1.ConditionAvailable, metav1.ConditionFalse, reasonIs(appsv1alpha1.ConditionAvailable, appsv1alpha1.ReasonClaimNotBound))
	runServer(t, ns, "db")
	waitMySQL(t, ns, appsv1alpha1.ConditionAvailable, metav1.ConditionTrue, nil)
}

func TestConfigChangeRollsThePod(t *testing.T) {
	ns := newNamespace(t)
	createMySQL(t, ns, func(m *appsv1alpha1.MySQL) { m.Spec.Config = []string{"max_connections=200"} })
	before := childrenExist(t, ns, true).sts.Spec.Template.Annotations[resources.ConfigHashAnnotation]

	patchSpec(t, ns, `{"spec":{"config":["max_connections=500"]}}`)
	await.Eventually(t, timeout, func(context.Context) error {
		cnf := get(t, ns, "db-config", &corev1.ConfigMap{}).Data["appkeeper.cnf"]
		hash := get(t, ns, "db", &appsv1.StatefulSet{}).Spec.Template.Annotations[resources.ConfigHashAnnotation]
		switch {
		case !strings.Contains(cnf, "\nmax_connections=500\n") || strings.Contains(cnf, "=200"):
			return fmt.Errorf("my.cnf = %q", cnf)
		case hash == before:
			return fmt.Errorf("the pod template's config hash is still %s", hash)
		case hash != resources.ConfigHash(cnf):
			return fmt.Errorf("config hash annotation %s does not match my.cnf", hash)
		}
		return nil
	})
}

func TestInvalidSpecsAreRejected(t *testing.T) {
	ns := newNamespace(t)
	admission.RequireInvalidSpecsRejected(t, k8s, ns, "MySQL")
}

func TestInvalidUpdatesAreRejected(t *testing.T) {
	ns := newNamespace(t)
	admission.RequireInvalidUpdatesRejected(t, k8s, ns, "MySQL")
}

func TestValidUpdatesAreAccepted(t *testing.T) {
	ns := newNamespace(t)
	admission.RequireValidUpdatesAccepted(t, k8s, ns, "MySQL")
}

func TestFieldsSetAtFirstStartAreImmutable(t *testing.T) {
	ns := newNamespace(t)
	createMySQL(t, ns, nil)
	for patch, want := range map[string]string{
		`{"spec":{"storage":{"size":"20Gi"}}}`:             "spec.storage is immutable",
		`{"spec":{"storage":{"storageClassName":"fast"}}}`: "spec.storage is immutable",
		`{"spec":{"database":"other"}}`:                    "spec.database is immutable",
		`{"spec":{"user":"other"}}`:                        "spec.user is immutable",
	} {
		m := &appsv1alpha1.MySQL{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns}}
		err := k8s.Patch(context.Background(), m, client.RawPatch(types.MergePatchType, []byte(patch)))
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("patch %s = %v, want Invalid naming %q", patch, err, want)
		}
	}
}
