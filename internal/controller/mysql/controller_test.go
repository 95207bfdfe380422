package mysql_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	resources "github.com/appkeeper/appkeeper/internal/resources/mysql"
	"github.com/appkeeper/appkeeper/internal/testenv"
	"github.com/appkeeper/appkeeper/internal/testutil"
)

var k8s client.Client

func TestMain(m *testing.M) {
	os.Exit(testenv.RunWithOperator(m, &k8s))
}

const timeout = 20 * time.Second

// newNamespace gives each test a namespace of its own.
func newNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "my-"}}
	if err := k8s.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
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
	testutil.Eventually(t, timeout, func(ctx context.Context) error {
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

// runServer does what the StatefulSet controller, the volume provisioner and the kubelet would: it
// creates the data PVC from the claim template, binds it, and writes the status of a StatefulSet
// whose one member runs the current template and is ready.
func runServer(t *testing.T, ns, name string) {
	t.Helper()
	ctx := context.Background()
	sts := get(t, ns, name, &appsv1.StatefulSet{})
	tmpl := sts.Spec.VolumeClaimTemplates[0]
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: tmpl.Name + "-" + name + "-0", Namespace: ns, Labels: tmpl.Labels},
		Spec:       tmpl.Spec,
	}
	if err := k8s.Create(ctx, pvc); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	testutil.Eventually(t, timeout, func(ctx context.Context) error {
		pvc := &corev1.PersistentVolumeClaim{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: tmpl.Name + "-" + name + "-0"}, pvc); err != nil {
			return err
		}
		if pvc.Status.Phase == corev1.ClaimBound {
			return nil
		}
		pvc.Status.Phase = corev1.ClaimBound
		return k8s.Status().Update(ctx, pvc)
	})
	markStatefulSetReady(t, ns, name)
}

// markStatefulSetReady writes the status of a StatefulSet whose one member runs the current
// template and is ready.
func markStatefulSetReady(t *testing.T, ns, name string) {
	t.Helper()
	testutil.Eventually(t, timeout, func(ctx context.Context) error {
		sts := &appsv1.StatefulSet{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, sts); err != nil {
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

// waitMySQL waits until the MySQL db reports condType at status for its generation, then until
// check, when given, passes on it.
func waitMySQL(t *testing.T, ns, condType string, status metav1.ConditionStatus, check func(*appsv1alpha1.MySQL) error) *appsv1alpha1.MySQL {
	t.Helper()
	m := &appsv1alpha1.MySQL{}
	testutil.Eventually(t, timeout, func(ctx context.Context) error {
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db"}, m); err != nil {
			return err
		}
		if err := testutil.ConditionIs(m.Status.Conditions, m.Generation, condType, status); err != nil {
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
	if err := testutil.ConditionIs(m.Status.Conditions, m.Generation, appsv1alpha1.ConditionProgressing, metav1.ConditionFalse); err != nil {
		t.Error(err)
	}
	if err := testutil.ConditionIs(m.Status.Conditions, m.Generation, appsv1alpha1.ConditionDegraded, metav1.ConditionFalse); err != nil {
		t.Error(err)
	}
	if m.Status.Image != appsv1alpha1.DefaultMySQLImage || m.Status.ReadyReplicas != 1 {
		t.Errorf("status image/readyReplicas = %s/%d", m.Status.Image, m.Status.ReadyReplicas)
	}
	wantEvents(t, ns, appsv1alpha1.EventCreated)
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

// TestPasswordsOnlyInTheSecret checks that the passwords reach the server only by reference and
// appear in no object a user reads without the right to read Secrets.
func TestPasswordsOnlyInTheSecret(t *testing.T) {
	ns := newNamespace(t)
	createMySQL(t, ns, nil)
	c := childrenExist(t, ns, true)
	runServer(t, ns, "db")
	waitMySQL(t, ns, appsv1alpha1.ConditionAvailable, metav1.ConditionTrue, nil)
	passwords := []string{string(c.secret.Data[appsv1alpha1.SecretKeyRootPassword]), string(c.secret.Data[appsv1alpha1.SecretKeyPassword])}

	env := map[string]corev1.EnvVar{}
	for _, e := range container(get(t, ns, "db", &appsv1.StatefulSet{})).Env {
		env[e.Name] = e
	}
	for name, key := range map[string]string{"MYSQL_ROOT_PASSWORD": appsv1alpha1.SecretKeyRootPassword, "MYSQL_PASSWORD": appsv1alpha1.SecretKeyPassword} {
		e := env[name]
		if e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil ||
			e.ValueFrom.SecretKeyRef.Name != "db-credentials" || e.ValueFrom.SecretKeyRef.Key != key {
			t.Errorf("env %s = %+v, want a secretKeyRef to db-credentials/%s", name, e, key)
		}
	}

	events := &eventsv1.EventList{}
	if err := k8s.List(context.Background(), events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for name, obj := range map[string]any{
		"MySQL":       get(t, ns, "db", &appsv1alpha1.MySQL{}),
		"StatefulSet": get(t, ns, "db", &appsv1.StatefulSet{}),
		"ConfigMap":   get(t, ns, "db-config", &corev1.ConfigMap{}),
		"Events":      events,
	} {
		raw, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range passwords {
			if strings.Contains(string(raw), p) {
				t.Errorf("the %s holds a generated password", name)
			}
		}
	}
}

func TestConfigChangeRollsThePod(t *testing.T) {
	ns := newNamespace(t)
	createMySQL(t, ns, func(m *appsv1alpha1.MySQL) { m.Spec.Config = []string{"max_connections=200"} })
	before := childrenExist(t, ns, true).sts.Spec.Template.Annotations[resources.ConfigHashAnnotation]

	patchSpec(t, ns, `{"spec":{"config":["max_connections=500"]}}`)
	testutil.Eventually(t, timeout, func(context.Context) error {
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

	testutil.Eventually(t, timeout, func(context.Context) error {
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
	testutil.Eventually(t, timeout, func(ctx context.Context) error {
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

func TestDeletionPolicy(t *testing.T) {
	ns := newNamespace(t)
	m := createMySQL(t, ns, func(m *appsv1alpha1.MySQL) { m.Spec.DeletionPolicy = appsv1alpha1.DeletionPolicyDelete })
	childrenExist(t, ns, true)
	testutil.Eventually(t, timeout, func(context.Context) error {
		secret := get(t, ns, "db-credentials", &corev1.Secret{})
		if owner := metav1.GetControllerOf(secret); owner == nil || owner.UID != m.UID {
			return fmt.Errorf("with the Delete policy the Secret's owner is %+v, want the MySQL", owner)
		}
		sts := get(t, ns, "db", &appsv1.StatefulSet{})
		if p := sts.Spec.PersistentVolumeClaimRetentionPolicy; p == nil || p.WhenDeleted != appsv1.DeletePersistentVolumeClaimRetentionPolicyType ||
			p.WhenScaled != appsv1.RetainPersistentVolumeClaimRetentionPolicyType {
			return fmt.Errorf("retention policy = %+v, want Delete when deleted, Retain when scaled", p)
		}
		return nil
	})

	// Back to Retain: the Secret loses its owner, the claim is kept.
	patchSpec(t, ns, `{"spec":{"deletionPolicy":"Retain"}}`)
	testutil.Eventually(t, timeout, func(context.Context) error {
		if refs := get(t, ns, "db-credentials", &corev1.Secret{}).OwnerReferences; len(refs) != 0 {
			return fmt.Errorf("secret owners = %+v, want none", refs)
		}
		if p := get(t, ns, "db", &appsv1.StatefulSet{}).Spec.PersistentVolumeClaimRetentionPolicy; p.WhenDeleted != appsv1.RetainPersistentVolumeClaimRetentionPolicyType {
			return fmt.Errorf("retention policy = %+v, want Retain when deleted", p)
		}
		return nil
	})
}

// TestPasswordsAreNeverRegenerated checks that the generated passwords, which the data volume's
// accounts were created with, survive every later pass: after a hand edit of the Secret's labels,
// and after the MySQL is deleted and created again under the same name.
func TestPasswordsAreNeverRegenerated(t *testing.T) {
	ns := newNamespace(t)
	createMySQL(t, ns, nil)
	first := childrenExist(t, ns, true).secret.Data

	same := func(ctx context.Context) error {
		secret := &corev1.Secret{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db-credentials"}, secret); err != nil {
			return err
		}
		for _, key := range []string{appsv1alpha1.SecretKeyRootPassword, appsv1alpha1.SecretKeyPassword} {
			if string(secret.Data[key]) != string(first[key]) {
				return fmt.Errorf("%s changed from %q to %q", key, first[key], secret.Data[key])
			}
		}
		if secret.Labels[appsv1alpha1.LabelManagedBy] != appsv1alpha1.ManagedByValue {
			return fmt.Errorf("secret labels %v, want the managed-by label back", secret.Labels)
		}
		return nil
	}

	// Dropping the label the operator's cache selects by hides the Secret from the cache.
	secret := get(t, ns, "db-credentials", &corev1.Secret{})
	delete(secret.Labels, appsv1alpha1.LabelManagedBy)
	if err := k8s.Update(context.Background(), secret); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, timeout, same)
	waitMySQL(t, ns, appsv1alpha1.ConditionDegraded, metav1.ConditionFalse, nil)

	if err := k8s.Delete(context.Background(), get(t, ns, "db", &appsv1alpha1.MySQL{})); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, timeout, func(ctx context.Context) error {
		err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db"}, &appsv1alpha1.MySQL{})
		if err == nil {
			return fmt.Errorf("MySQL not gone yet")
		}
		return client.IgnoreNotFound(err)
	})
	m := createMySQL(t, ns, nil)
	testutil.Eventually(t, timeout, func(ctx context.Context) error {
		sts := &appsv1.StatefulSet{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db"}, sts); err != nil {
			return err
		}
		if owner := metav1.GetControllerOf(sts); owner == nil || owner.UID != m.UID {
			return fmt.Errorf("statefulset owner = %+v, want the new MySQL", owner)
		}
		return same(ctx)
	})
	runServer(t, ns, "db")
	waitMySQL(t, ns, appsv1alpha1.ConditionAvailable, metav1.ConditionTrue, nil)
	testutil.Eventually(t, timeout, same)
}

func TestCredentialsSecretRef(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "mine", Namespace: ns},
		Data: map[string][]byte{
			appsv1alpha1.SecretKeyRootPassword: []byte("root-secret"), appsv1alpha1.SecretKeyPassword: []byte("user-secret"),
		},
	}
	if err := k8s.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	createMySQL(t, ns, func(m *appsv1alpha1.MySQL) {
		m.Spec.CredentialsSecretRef = &appsv1alpha1.SecretReference{Name: "mine"}
	})
	c := childrenExist(t, ns, false)
	for _, e := range container(c.sts).Env {
		if strings.Contains(e.Name, "PASSWORD") && (e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil || e.ValueFrom.SecretKeyRef.Name != "mine") {
			t.Errorf("env %s = %+v, want a secretKeyRef to the referenced Secret", e.Name, e)
		}
	}
	m := waitMySQL(t, ns, appsv1alpha1.ConditionDegraded, metav1.ConditionFalse, nil)
	if m.Status.SecretName != "mine" {
		t.Errorf("status.secretName = %s, want mine", m.Status.SecretName)
	}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db-credentials"}, &corev1.Secret{}); !apierrors.IsNotFound(err) {
		t.Errorf("get db-credentials = %v, want NotFound: nothing is generated for a referenced Secret", err)
	}
}

func TestCredentialsSecretRefProblemsAreReported(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	incomplete := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "root-only", Namespace: ns},
		Data:       map[string][]byte{appsv1alpha1.SecretKeyRootPassword: []byte("root-secret")},
	}
	if err := k8s.Create(ctx, incomplete); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"missing": "not found", "root-only": `no key "password"`} {
		m := &appsv1alpha1.MySQL{
			ObjectMeta: metav1.ObjectMeta{Name: "db-" + name, Namespace: ns},
			Spec: appsv1alpha1.MySQLSpec{
				Database: "shop", User: "shop", CredentialsSecretRef: &appsv1alpha1.SecretReference{Name: name},
			},
		}
		if err := k8s.Create(ctx, m); err != nil {
			t.Fatal(err)
		}
		testutil.Eventually(t, timeout, func(ctx context.Context) error {
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(m), m); err != nil {
				return err
			}
			if err := testutil.ConditionIs(m.Status.Conditions, m.Generation, appsv1alpha1.ConditionDegraded, metav1.ConditionTrue); err != nil {
				return err
			}
			c := meta.FindStatusCondition(m.Status.Conditions, appsv1alpha1.ConditionDegraded)
			if !strings.Contains(c.Message, "spec.credentialsSecretRef") || !strings.Contains(c.Message, want) {
				return fmt.Errorf("Degraded message = %q, want it to name spec.credentialsSecretRef and say %q", c.Message, want)
			}
			return testutil.ConditionIs(m.Status.Conditions, m.Generation, appsv1alpha1.ConditionAvailable, metav1.ConditionFalse)
		})
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(m), &appsv1.StatefulSet{}); !apierrors.IsNotFound(err) {
			t.Errorf("get StatefulSet %s = %v, want NotFound: the server cannot start without its passwords", m.Name, err)
		}
	}
}

func TestDowngradeIsRefusedAndUpgradeRolls(t *testing.T) {
	ns := newNamespace(t)
	createMySQL(t, ns, func(m *appsv1alpha1.MySQL) { m.Spec.Image = "mysql:8.4.6" })
	childrenExist(t, ns, true)
	runServer(t, ns, "db")
	waitMySQL(t, ns, appsv1alpha1.ConditionAvailable, metav1.ConditionTrue, nil)

	patchSpec(t, ns, `{"spec":{"image":"mysql:8.0.43"}}`)
	m := waitMySQL(t, ns, appsv1alpha1.ConditionDegraded, metav1.ConditionTrue, reasonIs(appsv1alpha1.ConditionDegraded, appsv1alpha1.ReasonDowngradeRefused))
	if c := meta.FindStatusCondition(m.Status.Conditions, appsv1alpha1.ConditionDegraded); !strings.Contains(c.Message, "spec.image") {
		t.Errorf("Degraded message = %q, want it to name spec.image", c.Message)
	}
	if err := testutil.ConditionIs(m.Status.Conditions, m.Generation, appsv1alpha1.ConditionAvailable, metav1.ConditionTrue); err != nil {
		t.Errorf("the server still runs 8.4.6: %v", err)
	}
	if m.Status.Image != "mysql:8.4.6" {
		t.Errorf("status.image = %s, want mysql:8.4.6", m.Status.Image)
	}
	wantEvents(t, ns, appsv1alpha1.ReasonDowngradeRefused)
	for range 3 {
		if image := container(get(t, ns, "db", &appsv1.StatefulSet{})).Image; image != "mysql:8.4.6" {
			t.Fatalf("statefulset image = %s after a refused downgrade, want mysql:8.4.6", image)
		}
		time.Sleep(500 * time.Millisecond)
	}

	for _, image := range []string{"mysql:8.4.7", "mysql:9.1"} {
		patchSpec(t, ns, fmt.Sprintf(`{"spec":{"image":%q}}`, image))
		testutil.Eventually(t, timeout, func(context.Context) error {
			if got := container(get(t, ns, "db", &appsv1.StatefulSet{})).Image; got != image {
				return fmt.Errorf("statefulset image = %s, want %s", got, image)
			}
			return nil
		})
		waitMySQL(t, ns, appsv1alpha1.ConditionProgressing, metav1.ConditionTrue, func(m *appsv1alpha1.MySQL) error {
			if m.Status.Image == image {
				return fmt.Errorf("status.image is %s before the rollout completed", image)
			}
			return testutil.ConditionIs(m.Status.Conditions, m.Generation, appsv1alpha1.ConditionDegraded, metav1.ConditionFalse)
		})
		markStatefulSetReady(t, ns, "db")
		waitMySQL(t, ns, appsv1alpha1.ConditionProgressing, metav1.ConditionFalse, func(m *appsv1alpha1.MySQL) error {
			if m.Status.Image != image {
				return fmt.Errorf("status.image = %s, want %s", m.Status.Image, image)
			}
			return nil
		})
	}
	wantEvents(t, ns, appsv1alpha1.EventUpgrading, appsv1alpha1.EventUpgraded)
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
	// Let the status write caused by readiness settle before watching for silence.
	time.Sleep(time.Second)
	before := versions()
	for range 5 {
		time.Sleep(time.Second)
		if after := versions(); after != before {
			t.Fatalf("an idle MySQL's objects changed: %s -> %s", before, after)
		}
	}
}

func TestInvalidSpecsAreRejected(t *testing.T) {
	ns := newNamespace(t)
	for i, tt := range testutil.InvalidSpecs {
		if tt.Kind != "MySQL" {
			continue
		}
		t.Run(tt.Name, func(t *testing.T) {
			obj := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": appsv1alpha1.GroupVersion.String(), "kind": tt.Kind,
				"metadata": map[string]any{"name": fmt.Sprintf("bad-%d", i), "namespace": ns},
				"spec":     tt.Spec,
			}}
			err := k8s.Create(context.Background(), obj)
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tt.Message) {
				t.Errorf("create = %v, want Invalid naming %q", err, tt.Message)
			}
		})
	}
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

func wantEvents(t *testing.T, ns string, reasons ...string) {
	t.Helper()
	testutil.Eventually(t, timeout, func(ctx context.Context) error {
		events := &eventsv1.EventList{}
		if err := k8s.List(ctx, events, client.InNamespace(ns)); err != nil {
			return err
		}
		seen := map[string]bool{}
		for _, e := range events.Items {
			seen[e.Reason] = true
		}
		for _, r := range reasons {
			if !seen[r] {
				return fmt.Errorf("no %s event among %v", r, seen)
			}
		}
		return nil
	})
}

func TestDataVolumeRemembersTheNewestServer(t *testing.T) {
	ns := newNamespace(t)
	createMySQL(t, ns, func(m *appsv1alpha1.MySQL) { m.Spec.Image = "mysql:8.4.6" })
	childrenExist(t, ns, true)
	runServer(t, ns, "db")
	waitMySQL(t, ns, appsv1alpha1.ConditionAvailable, metav1.ConditionTrue, nil)
	testutil.Eventually(t, timeout, func(context.Context) error {
		if got := get(t, ns, "data-db-0", &corev1.PersistentVolumeClaim{}).Annotations[resources.DataImageAnnotation]; got != "mysql:8.4.6" {
			return fmt.Errorf("data volume records %q, want mysql:8.4.6", got)
		}
		return nil
	})

	// Deleted with the Retain policy and created again with an older version on the same volume:
	// no StatefulSet may start 8.0 on data files 8.4 has written.
	db := get(t, ns, "db", &appsv1alpha1.MySQL{})
	if err := k8s.Delete(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	// Without a garbage collector in this test environment, the StatefulSet goes by hand.
	if err := k8s.Delete(context.Background(), get(t, ns, "db", &appsv1.StatefulSet{})); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, timeout, func(ctx context.Context) error {
		err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db"}, &appsv1alpha1.MySQL{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("MySQL still there: %v", err)
		}
		return nil
	})
	createMySQL(t, ns, func(m *appsv1alpha1.MySQL) { m.Spec.Image = "mysql:8.0.43" })
	m := waitMySQL(t, ns, appsv1alpha1.ConditionDegraded, metav1.ConditionTrue, reasonIs(appsv1alpha1.ConditionDegraded, appsv1alpha1.ReasonDowngradeRefused))
	if c := meta.FindStatusCondition(m.Status.Conditions, appsv1alpha1.ConditionDegraded); !strings.Contains(c.Message, "mysql:8.4.6") {
		t.Errorf("Degraded message = %q, want it to name the version the data was written by", c.Message)
	}
	for range 3 {
		err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "db"}, &appsv1.StatefulSet{})
		if !apierrors.IsNotFound(err) {
			t.Fatalf("a StatefulSet exists for a refused downgrade: %v", err)
		}
		time.Sleep(300 * time.Millisecond)
	}
}
