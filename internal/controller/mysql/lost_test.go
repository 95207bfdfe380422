package mysql_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/await"
)

// TestLostSecretIsNotRegenerated checks that a generated Secret deleted while the data volume
// remains is not made again with passwords the data would refuse: the MySQL says how to restore it,
// and takes the restored Secret back.
func TestLostSecretIsNotRegenerated(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	createMySQL(t, ns, nil)
	passwords := childrenExist(t, ns, true).secret.Data
	runServer(t, ns, "db")
	waitMySQL(t, ns, appsv1alpha1.ConditionAvailable, metav1.ConditionTrue, nil)

	if err := k8s.Delete(ctx, get(t, ns, "db-credentials", &corev1.Secret{})); err != nil {
		t.Fatal(err)
	}
	m := waitMySQL(t, ns, appsv1alpha1.ConditionDegraded, metav1.ConditionTrue, reasonIs(appsv1alpha1.ConditionDegraded, appsv1alpha1.ReasonCredentialsLost))
	msg := meta.FindStatusCondition(m.Status.Conditions, appsv1alpha1.ConditionDegraded).Message
	for _, want := range []string{"db-credentials", "data-db-0", "root-password"} {
		if !strings.Contains(msg, want) {
			t.Errorf("Degraded message %q does not say %q", msg, want)
		}
	}
	await.WantEvents(t, k8s, ns, timeout, appsv1alpha1.EventCredentialsLost)
	for range 5 {
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db-credentials"}, &corev1.Secret{}); !apierrors.IsNotFound(err) {
			t.Fatalf("get the lost Secret = %v, want NotFound: new passwords would not open the data", err)
		}
		time.Sleep(time.Second)
	}

	// Restored as the message says, the Secret is taken back, passwords unchanged.
	restored := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "db-credentials", Namespace: ns,
			Labels: map[string]string{appsv1alpha1.LabelManagedBy: appsv1alpha1.ManagedByValue}},
		Data: map[string][]byte{
			appsv1alpha1.SecretKeyRootPassword: passwords[appsv1alpha1.SecretKeyRootPassword],
			appsv1alpha1.SecretKeyPassword:     passwords[appsv1alpha1.SecretKeyPassword],
		},
	}
	if err := k8s.Create(ctx, restored); err != nil {
		t.Fatal(err)
	}
	waitMySQL(t, ns, appsv1alpha1.ConditionDegraded, metav1.ConditionFalse, nil)
	await.Eventually(t, timeout, func(ctx context.Context) error {
		secret := &corev1.Secret{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db-credentials"}, secret); err != nil {
			return err
		}
		if string(secret.Data[appsv1alpha1.SecretKeyRootPassword]) != string(passwords[appsv1alpha1.SecretKeyRootPassword]) ||
			string(secret.Data[appsv1alpha1.SecretKeyPassword]) != string(passwords[appsv1alpha1.SecretKeyPassword]) {
			return errors.New("the restored passwords were changed")
		}
		if string(secret.Data[appsv1alpha1.SecretKeyUser]) != "shop" {
			return fmt.Errorf("the restored Secret did not get its user key back: %v", secret.Data[appsv1alpha1.SecretKeyUser])
		}
		return nil
	})
}

// TestReferencedSecretCreatedLaterIsNoticedAtOnce checks that a MySQL waiting for the Secret it
// references starts as soon as the Secret appears, not at its next retry: the retries back off to
// over ten seconds apart while the Secret is missing.
func TestReferencedSecretCreatedLaterIsNoticedAtOnce(t *testing.T) {
	ns := newNamespace(t)
	createMySQL(t, ns, func(m *appsv1alpha1.MySQL) {
		m.Spec.CredentialsSecretRef = &appsv1alpha1.SecretReference{Name: "later"}
	})
	waitMySQL(t, ns, appsv1alpha1.ConditionDegraded, metav1.ConditionTrue, nil)
	time.Sleep(12 * time.Second)

	createCredentialsSecret(t, ns, "later")
	await.Eventually(t, 5*time.Second, func(ctx context.Context) error {
		m := &appsv1alpha1.MySQL{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db"}, m); err != nil {
			return err
		}
		return await.ConditionIs(m.Status.Conditions, m.Generation, appsv1alpha1.ConditionDegraded, metav1.ConditionFalse)
	})
}
