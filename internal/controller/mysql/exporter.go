package mysql

import (
	"context"
	"crypto/rand"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/apply"
	resources "github.com/appkeeper/appkeeper/internal/resources/mysql"
)

// reconcileExporterAccount keeps the Secret of the account the exporter connects as. It is made
// when the server first runs the exporter and kept, with its password, when it no longer does, so
// that running it again changes nothing but the pod. The account itself is made or dropped by the
// init-file, which the returned account goes into. runsExporter tells whether the server's pod, as
// the pass builds it, runs the exporter: after a rollback that is the last good revision's
// monitoring, not the spec's.
func (r *Reconciler) reconcileExporterAccount(ctx context.Context, m *appsv1alpha1.MySQL, runsExporter bool) (resources.ExporterAccount, error) {
	name := m.ExporterAccountSecretName()
	account := resources.ExporterAccount{Enabled: runsExporter}
	if account.Enabled {
		data, _, err := apply.GeneratedSecret(ctx, r.Client, m, name,
			generatePassword,
			func(data map[string][]byte) *corev1ac.SecretApplyConfiguration {
				return resources.ExporterAccountSecret(m, data[appsv1alpha1.SecretKeyPassword])
			})
		if err != nil {
			return account, fmt.Errorf("exporter account of MySQL %s/%s: %w", m.Namespace, m.Name, err)
		}
		account.Password = data[appsv1alpha1.SecretKeyPassword]
		return account, nil
	}
	live := &corev1.Secret{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: name}, live)
	if apierrors.IsNotFound(err) || (err == nil && len(live.Data[appsv1alpha1.SecretKeyPassword]) == 0) {
		// The exporter has never run: there is no account to drop.
		return account, nil
	}
	if err != nil {
		return account, fmt.Errorf("exporter account of MySQL %s/%s: %w", m.Namespace, m.Name, err)
	}
	account.Password = live.Data[appsv1alpha1.SecretKeyPassword]
	desired := resources.ExporterAccountSecret(m, account.Password)
	return account, apply.Ensure(ctx, r.Client, m, name, &corev1.Secret{}, desired, corev1ac.ExtractSecret)
}

// generatePassword makes the password of an account appkeeper's own tools connect as.
func generatePassword() map[string][]byte {
	return map[string][]byte{appsv1alpha1.SecretKeyPassword: []byte(rand.Text())}
}

// runsExporter tells whether the StatefulSet's pod runs the exporter; false when there is none.
func runsExporter(sts *appsv1.StatefulSet) bool {
	if sts == nil {
		return false
	}
	for _, c := range sts.Spec.Template.Spec.Containers {
		if c.Name == appsv1alpha1.ExporterContainerName {
			return true
		}
	}
	return false
}
