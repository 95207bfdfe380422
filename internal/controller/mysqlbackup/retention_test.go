package mysqlbackup

import (
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

func TestPrunable(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	b := func(name string, hoursAgo int, phase appsv1alpha1.BackupPhase, verification appsv1alpha1.VerificationResult, reason string) appsv1alpha1.MySQLBackup {
		return appsv1alpha1.MySQLBackup{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Status: appsv1alpha1.MySQLBackupStatus{Phase: phase, Verification: verification, Reason: reason,
				CompletionTime: ptr.To(metav1.NewTime(now.Add(-time.Duration(hoursAgo) * time.Hour)))},
		}
	}
	ok, failed, running := appsv1alpha1.BackupSucceeded, appsv1alpha1.BackupFailed, appsv1alpha1.BackupRunning
	sched, manual := appsv1alpha1.BackupReasonScheduled, appsv1alpha1.BackupReasonOnDemand
	pass, fail := appsv1alpha1.VerificationPassed, appsv1alpha1.VerificationFailed
	tests := []struct {
		name      string
		backups   []appsv1alpha1.MySQLBackup
		retention appsv1alpha1.BackupRetention
		verify    bool
		want      []string
	}{
		{"keep last 2 counts the new one", []appsv1alpha1.MySQLBackup{b("a", 3, ok, "", sched), b("b", 2, ok, "", sched), b("c", 1, ok, "", sched)},
			appsv1alpha1.BackupRetention{KeepLast: ptr.To[int32](2)}, false, []string{"a", "b"}},
		{"max age", []appsv1alpha1.MySQLBackup{b("a", 50, ok, "", sched), b("b", 30, ok, "", sched), b("c", 1, ok, "", sched)},
			appsv1alpha1.BackupRetention{MaxAge: &metav1.Duration{Duration: 48 * time.Hour}}, false, []string{"a"}},
		{"the newest good backup stays however old", []appsv1alpha1.MySQLBackup{b("a", 100, ok, "", sched), b("b", 90, failed, "", sched)},
			appsv1alpha1.BackupRetention{MaxAge: &metav1.Duration{Duration: 48 * time.Hour}}, false, []string{"b"}},
		{"with verification, good means verified", []appsv1alpha1.MySQLBackup{b("a", 3, ok, pass, sched), b("b", 2, ok, fail, sched), b("c", 1, ok, "", sched)},
			appsv1alpha1.BackupRetention{KeepLast: ptr.To[int32](1)}, true, []string{"b", "c"}},
		{"a failed verification is never the one kept", []appsv1alpha1.MySQLBackup{b("a", 3, ok, "", sched), b("b", 1, ok, fail, sched)},
			appsv1alpha1.BackupRetention{KeepLast: ptr.To[int32](1)}, false, []string{"b"}},
		{"on-demand and running backups are left alone", []appsv1alpha1.MySQLBackup{b("a", 5, ok, "", manual), b("b", 4, running, "", sched), b("c", 3, ok, "", sched), b("d", 2, ok, "", sched)},
			appsv1alpha1.BackupRetention{KeepLast: ptr.To[int32](1)}, false, []string{"c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, p := range Prunable(tt.backups, &tt.retention, tt.verify, now) {
				got = append(got, p.Name)
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Prunable = %v, want %v", got, tt.want)
			}
		})
	}
}
