package metrics

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

func TestScheduleInterval(t *testing.T) {
	now := time.Date(2026, 11, 24, 3, 20, 0, 0, time.UTC)
	tests := []struct {
		name   string
		policy *appsv1alpha1.MySQLBackupPolicy
		want   time.Duration
		absent bool
	}{
		{name: "every day", policy: &appsv1alpha1.MySQLBackupPolicy{Schedule: "0 3 * * *"}, want: 24 * time.Hour},
		{name: "every 15 minutes", policy: &appsv1alpha1.MySQLBackupPolicy{Schedule: "*/15 * * * *"}, want: 15 * time.Minute},
		{name: "weekdays: the weekend's gap", policy: &appsv1alpha1.MySQLBackupPolicy{Schedule: "0 2 * * 1-5"}, want: 72 * time.Hour},
		{name: "every day in a time zone",
			policy: &appsv1alpha1.MySQLBackupPolicy{Schedule: "0 2 * * *", TimeZone: ptr.To("America/New_York")}, want: 24 * time.Hour},
		{name: "monthly", policy: &appsv1alpha1.MySQLBackupPolicy{Schedule: "0 2 1 * *"}, want: 31 * 24 * time.Hour},
		{name: "no policy", absent: true},
		{name: "suspended", policy: &appsv1alpha1.MySQLBackupPolicy{Schedule: "0 3 * * *", Suspend: true}, absent: true},
		{name: "invalid", policy: &appsv1alpha1.MySQLBackupPolicy{Schedule: "every day"}, absent: true},
		{name: "never comes", policy: &appsv1alpha1.MySQLBackupPolicy{Schedule: "0 0 30 2 *"}, absent: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := newScheduleIntervals().of(tt.policy, now)
			if ok == tt.absent || got != tt.want {
				t.Errorf("interval %v (present %v), want %v (present %v)", got, ok, tt.want, !tt.absent)
			}
		})
	}
}

func TestBackupFailuresNeverDecrease(t *testing.T) {
	tally := newFailureTally()
	db := resourceKey{kindMySQL, "shop", "db"}
	collect := func(failed ...types.UID) float64 {
		tally.begin()
		defer tally.end()
		return tally.count(db, failed)
	}
	steps := []struct {
		failed []types.UID
		want   float64
	}{
		{failed: []types.UID{"a", "b"}, want: 2},
		{failed: []types.UID{"a", "b"}, want: 2},
		{failed: []types.UID{"b"}, want: 2}, // retention deleted a
		{failed: []types.UID{"b", "c"}, want: 3},
		{want: 3}, // all deleted
	}
	for i, s := range steps {
		if got := collect(s.failed...); got != s.want {
			t.Errorf("step %d: %v failures, want %v", i, got, s.want)
		}
	}
	tally.begin()
	tally.end()
	if len(tally.resources) != 0 {
		t.Errorf("a deleted resource's count is kept: %v", tally.resources)
	}
}

// A restore point is one backup of its WordPress: its size is its two artifacts', and its
// verification its database dump's.
func TestWordPressBackupsAreSummarised(t *testing.T) {
	completed := metav1.NewTime(time.Date(2026, 11, 24, 2, 0, 0, 0, time.UTC))
	started := metav1.NewTime(completed.Add(-90 * time.Second))
	dump := appsv1alpha1.MySQLBackup{ObjectMeta: metav1.ObjectMeta{Namespace: "blog", Name: "point-db", UID: "dump"},
		Spec:   appsv1alpha1.MySQLBackupSpec{MySQLName: "site-mysql"},
		Status: appsv1alpha1.MySQLBackupStatus{Phase: appsv1alpha1.BackupSucceeded, Size: 1000, CompletionTime: &completed, Verification: appsv1alpha1.VerificationFailed}}
	point := appsv1alpha1.WordPressBackup{ObjectMeta: metav1.ObjectMeta{Namespace: "blog", Name: "point", UID: "point"},
		Spec: appsv1alpha1.WordPressBackupSpec{WordPressName: "site"},
		Status: appsv1alpha1.WordPressBackupStatus{Phase: appsv1alpha1.BackupSucceeded, StartTime: &started, CompletionTime: &completed,
			Content: &appsv1alpha1.WordPressContentBackup{Size: 234}}}
	states := indexBackups([]appsv1alpha1.MySQLBackup{dump}, []appsv1alpha1.WordPressBackup{point})
	site := states[resourceKey{kindWordPress, "blog", "site"}]
	if site == nil || site.lastSuccess == nil || site.lastSuccess.size != 1234 || site.newestVerification == nil || site.lastVerified != nil {
		t.Fatalf("WordPress backups %+v, want the restore point of 1234 bytes, failed verification", site)
	}
	if db := states[resourceKey{kindMySQL, "blog", "site-mysql"}]; db == nil || db.lastSuccess == nil || db.lastSuccess.size != 1000 {
		t.Errorf("the MySQL's backups %+v, want its dump", db)
	}
}
