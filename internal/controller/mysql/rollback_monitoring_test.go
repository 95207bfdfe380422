package mysql_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/inspect"
)

// TestRollbackBringsBackTheExportersAccountWithItsPod: monitoring turned off, or on, in a change
// that fails is rolled back to the pod of the last good revision, so mysqld, when that pod starts,
// must make the exporter's account if the pod runs the exporter, with the password the exporter
// still reads, and drop it if not, whatever the spec says.
func TestRollbackBringsBackTheExportersAccountWithItsPod(t *testing.T) {
	for _, good := range []bool{true, false} {
		t.Run(fmt.Sprintf("monitoring %v, then %v", good, !good), func(t *testing.T) {
			ns := newNamespace(t)
			runningGood(t, ns, func(m *appsv1alpha1.MySQL) { m.Spec.Monitoring.Enabled = good })
			password := ""
			if good {
				password = exporterPassword(t, ns)
			}
			const broken = "mysql:8.4.7-broken"
			patchSpec(t, ns, fmt.Sprintf(`{"spec":{"image":%q,"monitoring":{"enabled":%v}}}`, broken, !good))
			failing := func(sts *appsv1.StatefulSet) error {
				if err := exporterAsSaid(sts.Spec.Template, !good); err != nil {
					return err
				}
				return imageIs(broken)(sts)
			}
			await.Eventually(t, timeout, func(context.Context) error { return failing(get(t, ns, "db", &appsv1.StatefulSet{})) })
			// The failing revision's server makes or drops the account as its own pod needs. Read
			// before its pod fails: the rollback that follows rewrites the account at once.
			if err := accountsProblem(t, ns, !good); err != nil {
				t.Error(err)
			}
			serverFails(t, ns, failing, appsv1alpha1.ReasonImagePullBackOff)

			rolledBack(t, ns)
			restored := func() error {
				if err := exporterAsSaid(get(t, ns, "db", &appsv1.StatefulSet{}).Spec.Template, good); err != nil {
					return err
				}
				return accountsProblem(t, ns, good)
			}
			await.Eventually(t, timeout, func(context.Context) error { return restored() })
			holdsFor(t, 2*time.Second, restored)
			if good && exporterPassword(t, ns) != password {
				t.Error("the rollback changed the exporter's password")
			}
		})
	}
}

// exporterAsSaid says how the pod differs from one that runs the exporter, or none, as runs says.
func exporterAsSaid(template corev1.PodTemplateSpec, runs bool) error {
	if runs {
		return exporterProblem(template)
	}
	if inspect.HasContainer(template, "exporter") {
		return fmt.Errorf("the pod runs the exporter")
	}
	return nil
}
