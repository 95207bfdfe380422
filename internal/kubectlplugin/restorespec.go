package kubectlplugin

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

// newRestored is the new instance: a copy of the model's spec (or the kind's defaults) that
// starts from the backup.
func newRestored(ctx context.Context, c client.Client, ns string, r ref, model client.Object, target string, o restoreOptions) (client.Object, error) {
	meta := metav1.ObjectMeta{Namespace: ns, Name: target}
	if r.kind.name == "mysql" {
		spec := appsv1alpha1.MySQLSpec{Database: o.database, User: o.user}
		if model != nil {
			spec = copyMySQLSpec(model.(*appsv1alpha1.MySQL).Spec)
		}
		spec.Restore = &appsv1alpha1.MySQLRestore{BackupName: o.from}
		spec.Restore.PointInTime, _ = o.pointInTime()
		return &appsv1alpha1.MySQL{ObjectMeta: meta, Spec: spec}, nil
	}
	wp := &appsv1alpha1.WordPress{ObjectMeta: meta}
	wp.Spec.Database.MySQL = &appsv1alpha1.MySQLSpec{}
	if model != nil {
		spec, err := copyWordPressSpec(ctx, c, model.(*appsv1alpha1.WordPress))
		if err != nil {
			return nil, err
		}
		wp.Spec = spec
	}
	wp.Spec.Restore = &appsv1alpha1.WordPressRestore{BackupName: o.from}
	return wp, nil
}

// copyMySQLSpec keeps what makes the server the same and leaves out what belongs to the model
// alone: its backup schedule (a copy backs up nothing unasked), its credentials (the copy
// generates its own), its deletion policy (the copy keeps its data) and its restore.
func copyMySQLSpec(model appsv1alpha1.MySQLSpec) appsv1alpha1.MySQLSpec {
	spec := *model.DeepCopy()
	spec.Backup = nil
	spec.CredentialsSecretRef = nil
	spec.DeletionPolicy = ""
	spec.Restore = nil
	return spec
}

// copyWordPressSpec copies a site for a restore, which needs a MySQL of its own: a site on a
// referenced MySQL gets one with that MySQL's spec, so that its database and user are the same.
func copyWordPressSpec(ctx context.Context, c client.Client, model *appsv1alpha1.WordPress) (appsv1alpha1.WordPressSpec, error) {
	spec := *model.Spec.DeepCopy()
	spec.DeletionPolicy = ""
	spec.Restore = nil
	if spec.Database.MySQL != nil {
		database := copyMySQLSpec(*spec.Database.MySQL)
		spec.Database.MySQL = &database
		return spec, nil
	}
	m := &appsv1alpha1.MySQL{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: model.Namespace, Name: model.MySQLName()}, m); err != nil {
		return spec, apiError(err, fmt.Sprintf("mysql/%s, the database of wordpress/%s", model.MySQLName(), model.Name))
	}
	database := copyMySQLSpec(m.Spec)
	spec.Database = appsv1alpha1.WordPressDatabase{MySQL: &database}
	return spec, nil
}
