package mysql

import (
	"context"
	"crypto/rand"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/apply"
	"github.com/appkeeper/appkeeper/internal/pass"
	resources "github.com/appkeeper/appkeeper/internal/resources/mysql"
)

// credentialsLostError says that the generated Secret is gone while the data volume that was
// initialized with its passwords remains: new passwords would not open the data.
type credentialsLostError struct {
	secret, claim string
}

func (e *credentialsLostError) Error() string {
	return fmt.Sprintf("the Secret %s is missing while the data volume claim %s, initialized with its passwords, remains; "+
		"appkeeper will not make new passwords that the data would refuse. Create the Secret %s again with the keys %s and %s "+
		"holding the former passwords and the label %s=%s, or, to start over without the data, delete this MySQL and the claim %s",
		e.secret, e.claim, e.secret, appsv1alpha1.SecretKeyRootPassword, appsv1alpha1.SecretKeyPassword,
		appsv1alpha1.LabelManagedBy, appsv1alpha1.ManagedByValue, e.claim)
}

// Reason is the Degraded reason of a credentialsLostError.
func (e *credentialsLostError) Reason() string { return appsv1alpha1.ReasonCredentialsLost }

// reconcileCredentials checks a referenced Secret, or generates the Secret once and keeps its
// metadata as the deletion policy says.
func (r *Reconciler) reconcileCredentials(ctx context.Context, m *appsv1alpha1.MySQL, created *pass.Creations) error {
	if ref := m.Spec.CredentialsSecretRef; ref != nil {
		return r.checkReferencedSecret(ctx, m, ref.Name)
	}
	name := m.GeneratedSecretName()
	if err := r.refuseNewPasswordsForOldData(ctx, m); err != nil {
		return fmt.Errorf("credentials of MySQL %s/%s: %w", m.Namespace, m.Name, err)
	}
	_, generated, err := apply.GeneratedSecret(ctx, r.Client, m, name,
		generatePasswords,
		func(data map[string][]byte) *corev1ac.SecretApplyConfiguration {
			return resources.Secret(m, data[appsv1alpha1.SecretKeyRootPassword], data[appsv1alpha1.SecretKeyPassword])
		})
	if err != nil {
		return fmt.Errorf("credentials of MySQL %s/%s: %w", m.Namespace, m.Name, err)
	}
	if generated {
		created.Add(nil, "Secret %s with random passwords", name)
	}
	return nil
}

// refuseNewPasswordsForOldData returns a credentialsLostError when the generated Secret does not
// exist but the data volume does: mysqld keeps the passwords it first started with in its data
// files. Both are read from the API server, since a cache that has not caught up would otherwise
// pass for a missing Secret; that costs two reads, made at once, only when the cache has no Secret.
func (r *Reconciler) refuseNewPasswordsForOldData(ctx context.Context, m *appsv1alpha1.MySQL) error {
	key := client.ObjectKey{Namespace: m.Namespace, Name: m.GeneratedSecretName()}
	if err := r.Client.Get(ctx, key, &corev1.Secret{}); !apierrors.IsNotFound(err) {
		return client.IgnoreNotFound(err)
	}
	claim := client.ObjectKey{Namespace: m.Namespace, Name: m.DataClaimName()}
	pvc := &corev1.PersistentVolumeClaim{}
	var secretErr, err error
	_ = pass.Concurrently(
		func() error { secretErr = r.Client.APIReader.Get(ctx, key, &corev1.Secret{}); return nil },
		func() error { err = r.Client.APIReader.Get(ctx, claim, pvc); return nil },
	)
	if !apierrors.IsNotFound(secretErr) {
		return client.IgnoreNotFound(secretErr)
	}
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("get the data volume claim %s: %w", claim.Name, err)
	case !pvc.DeletionTimestamp.IsZero():
		// Its deletion, which the watch on claims reports, starts the next pass.
		return fmt.Errorf("the data volume claim %s is being deleted: new passwords are made once it is gone", claim.Name)
	}
	return &credentialsLostError{secret: key.Name, claim: claim.Name}
}

// checkReferencedSecret reads a user's Secret from the API server: the cache holds only Secrets
// appkeeper manages. A watch on Secrets' names, started here the first time, brings the MySQL back
// when the Secret appears or changes.
func (r *Reconciler) checkReferencedSecret(ctx context.Context, m *appsv1alpha1.MySQL, name string) error {
	if err := r.referencedSecrets.ensure(); err != nil {
		return fmt.Errorf("watch the Secrets MySQLs reference: %w", err)
	}
	secret := &corev1.Secret{}
	if err := r.Client.APIReader.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: name}, secret); err != nil {
		return fmt.Errorf("spec.credentialsSecretRef: Secret %s/%s: %w", m.Namespace, name, err)
	}
	required := []string{appsv1alpha1.SecretKeyRootPassword}
	if m.Spec.User != "" {
		required = append(required, appsv1alpha1.SecretKeyPassword)
	}
	for _, key := range required {
		if len(secret.Data[key]) == 0 {
			return fmt.Errorf("spec.credentialsSecretRef: Secret %s/%s has no key %q", m.Namespace, name, key)
		}
	}
	return nil
}

// generatePasswords makes the root and user passwords: 26 base32 characters from the system's
// secure random source, 130 bits each, with no character a shell or a connection string would
// treat specially.
func generatePasswords() map[string][]byte {
	return map[string][]byte{
		appsv1alpha1.SecretKeyRootPassword: []byte(rand.Text()),
		appsv1alpha1.SecretKeyPassword:     []byte(rand.Text()),
	}
}
