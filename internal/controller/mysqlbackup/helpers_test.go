package mysqlbackup_test

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	resources "github.com/appkeeper/appkeeper/internal/resources/mysqlbackup"
	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/kubesim"
)

const timeout = 20 * time.Second

// availableMySQL creates the MySQL db and plays the StatefulSet controller until it is Available.
func availableMySQL(t *testing.T, ns, name string, mutate func(*appsv1alpha1.MySQL)) *appsv1alpha1.MySQL {
	t.Helper()
	m := &appsv1alpha1.MySQL{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       appsv1alpha1.MySQLSpec{Database: "shop", User: "shop", Image: "mysql:8.4.6"},
	}
	if mutate != nil {
		mutate(m)
	}
	if err := k8s.Create(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &appsv1.StatefulSet{})
	})
	kubesim.RunStatefulSet(t, k8s, ns, name, timeout)
	return waitMySQL(t, ns, name, func(m *appsv1alpha1.MySQL) error {
		return await.ConditionIs(m.Status.Conditions, m.Generation, appsv1alpha1.ConditionAvailable, metav1.ConditionTrue)
	})
}

func waitMySQL(t *testing.T, ns, name string, check func(*appsv1alpha1.MySQL) error) *appsv1alpha1.MySQL {
	t.Helper()
	m := &appsv1alpha1.MySQL{}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, m); err != nil {
			return err
		}
		return check(m)
	})
	return m
}

func createBackup(t *testing.T, ns, name string, mutate func(*appsv1alpha1.MySQLBackup)) {
	t.Helper()
	b := &appsv1alpha1.MySQLBackup{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       appsv1alpha1.MySQLBackupSpec{MySQLName: "db"},
	}
	if mutate != nil {
		mutate(b)
	}
	if err := k8s.Create(context.Background(), b); err != nil {
		t.Fatal(err)
	}
}

var (
	dumpContainer   = resources.DumpContainer
	verifyContainer = resources.VerifyContainer
	verified        = ptr.To(true)
	notVerified     = ptr.To(false)
)

func timeUntil(t time.Time) time.Duration { return time.Until(t) }
