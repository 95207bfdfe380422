package wordpress

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

func TestSiteVisibleChange(t *testing.T) {
	available := func(status metav1.ConditionStatus, reason, message string) metav1.Condition {
		return metav1.Condition{Type: appsv1alpha1.ConditionAvailable, Status: status, Reason: reason, Message: message, ObservedGeneration: 1}
	}
	base := func() *appsv1alpha1.MySQL {
		db := &appsv1alpha1.MySQL{ObjectMeta: metav1.ObjectMeta{Name: "blog-mysql", Generation: 1}}
		db.Status.Endpoint = "blog-mysql.shop.svc:3306"
		db.Status.Conditions = []metav1.Condition{
			available(metav1.ConditionFalse, "ClaimNotBound", "the data volume claim data-blog-mysql-0 is Pending"),
			{Type: appsv1alpha1.ConditionProgressing, Status: metav1.ConditionTrue, Reason: "Creating", ObservedGeneration: 1},
		}
		return db
	}
	tests := []struct {
		name   string
		change func(db *appsv1alpha1.MySQL)
		want   bool
	}{
		{"nothing", func(*appsv1alpha1.MySQL) {}, false},
		{"another condition", func(db *appsv1alpha1.MySQL) { db.Status.Conditions[1].Reason = "RollingOut" }, false},
		{"replica counts", func(db *appsv1alpha1.MySQL) { db.Status.ReadyReplicas = 1 }, false},
		{"the spec", func(db *appsv1alpha1.MySQL) { db.Generation = 2 }, true},
		{"Available's message", func(db *appsv1alpha1.MySQL) {
			db.Status.Conditions[0] = available(metav1.ConditionFalse, "ReplicasNotReady", "mysqld is not ready to serve queries")
		}, true},
		{"Available", func(db *appsv1alpha1.MySQL) {
			db.Status.Conditions[0] = available(metav1.ConditionTrue, "AsExpected", "mysqld serves")
		}, true},
		{"Available observed on a newer spec", func(db *appsv1alpha1.MySQL) { db.Status.Conditions[0].ObservedGeneration = 2 }, true},
		{"Available gone", func(db *appsv1alpha1.MySQL) { db.Status.Conditions = db.Status.Conditions[1:] }, true},
		{"the endpoint", func(db *appsv1alpha1.MySQL) { db.Status.Endpoint = "" }, true},
		{"deletion", func(db *appsv1alpha1.MySQL) { db.DeletionTimestamp = new(metav1.Now()) }, true},
		{"the controller", func(db *appsv1alpha1.MySQL) {
			db.OwnerReferences = []metav1.OwnerReference{{UID: "site", Controller: new(true)}}
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			updated := base()
			tt.change(updated)
			if got := siteVisibleChange(base(), updated); got != tt.want {
				t.Errorf("siteVisibleChange = %v, want %v", got, tt.want)
			}
		})
	}
}
