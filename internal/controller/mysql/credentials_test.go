package mysql_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/kubesim"
)

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

func TestDeletionPolicy(t *testing.T) {
	ns := newNamespace(t)
	m := createMySQL(t, ns, func(m *appsv1alpha1.MySQL) { m.Spec.DeletionPolicy = appsv1alpha1.DeletionPolicyDelete })
	childrenExist(t, ns, true)
	await.Eventually(t, timeout, func(context.Context) error {
		secret := get(t, ns, "db-credentials", &corev1.Secret{})
		if owner := metav1.GetControllerOf(secret); owner == nil || owner.UID != m.UID {
			return fmt.Errorf("with the Delete policy the Secret's owner is %+v, want the MySQL", owner)
		}
		sts := get(t, ns, "db", &appsv1.StatefulSet{})
		if p := sts.Spec.PersistentVolumeClaimRetentionPolicy; p == nil || p.WhenDeleted != appsv1.DeletePersistentVolumeClaimRetentionPolicyType ||
			p.WhenScaled != appsv1.DeletePersistentVolumeClaimRetentionPolicyType {
			return fmt.Errorf("retention policy = %+v, want Delete when deleted and when a member is removed", p)
		}
		return nil
	})

	// Back to Retain: the Secret loses its owner, the claim is kept.
	patchSpec(t, ns, `{"spec":{"deletionPolicy":"Retain"}}`)
	await.Eventually(t, timeout, func(context.Context) error {
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
	await.Eventually(t, timeout, same)
	waitMySQL(t, ns, appsv1alpha1.ConditionDegraded, metav1.ConditionFalse, nil)

	kubesim.DeleteAndCollectGarbage(t, k8s, get(t, ns, "db", &appsv1alpha1.MySQL{}), timeout)
	m := createMySQL(t, ns, nil)
	await.Eventually(t, timeout, func(ctx context.Context) error {
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
	await.Eventually(t, timeout, same)
}

func TestCredentialsSecretRef(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	createCredentialsSecret(t, ns, "mine")
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
		await.Eventually(t, timeout, func(ctx context.Context) error {
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(m), m); err != nil {
				return err
			}
			if err := await.ConditionIs(m.Status.Conditions, m.Generation, appsv1alpha1.ConditionDegraded, metav1.ConditionTrue); err != nil {
				return err
			}
			c := meta.FindStatusCondition(m.Status.Conditions, appsv1alpha1.ConditionDegraded)
			if !strings.Contains(c.Message, "spec.credentialsSecretRef") || !strings.Contains(c.Message, want) {
				return fmt.Errorf("Degraded message = %q, want it to name spec.credentialsSecretRef and say %q", c.Message, want)
			}
			return await.ConditionIs(m.Status.Conditions, m.Generation, appsv1alpha1.ConditionAvailable, metav1.ConditionFalse)
		})
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(m), &appsv1.StatefulSet{}); !apierrors.IsNotFound(err) {
			t.Errorf("get StatefulSet %s = %v, want NotFound: the server cannot start without its passwords", m.Name, err)
		}
		wantOneWarning(t, ns, m.Name, want)
	}
}

// wantOneWarning waits for the Warning Event that tells why the MySQL named name is Degraded, and
// checks that the passes retrying it add no other.
func wantOneWarning(t *testing.T, ns, name, says string) {
	t.Helper()
	warnings := func(events []eventsv1.Event) []eventsv1.Event {
		var out []eventsv1.Event
		for _, e := range events {
			if e.Type == corev1.EventTypeWarning && e.Regarding.Name == name && strings.Contains(e.Note, says) {
				out = append(out, e)
			}
		}
		return out
	}
	await.WaitForEvents(t, k8s, ns, timeout, func(events []eventsv1.Event) error {
		if len(warnings(events)) == 0 {
			return fmt.Errorf("no Warning Event for MySQL %s saying %q", name, says)
		}
		return nil
	})
	time.Sleep(2 * time.Second)
	list := &eventsv1.EventList{}
	if err := k8s.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if got := warnings(list.Items); len(got) != 1 || got[0].Series != nil {
		t.Errorf("Warning Events for MySQL %s: %+v, want exactly one, not repeated", name, got)
	}
}
