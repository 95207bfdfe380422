package mysql

import (
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	resources "github.com/appkeeper/appkeeper/internal/resources/mysql"
)

func TestDueTime(t *testing.T) {
	schedule, err := resources.ParseSchedule(&appsv1alpha1.MySQLBackupPolicy{Schedule: "0 2 * * *", TimeZone: ptr.To("Europe/Paris")})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	next := schedule.Next(start)
	if want := time.Date(2026, 11, 21, 1, 0, 0, 0, time.UTC); !next.Equal(want) { // 02:00 in Paris
		t.Fatalf("next = %s, want %s", next, want)
	}
	if due, missed := dueTime(schedule, next, next.Add(time.Hour)); !due.Equal(next) || missed != 0 {
		t.Errorf("dueTime an hour after = %s, %d missed; want %s, none missed", due, missed, next)
	}
	due, missed := dueTime(schedule, next, time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
	if missed != 2 || !due.Equal(time.Date(2026, 11, 23, 1, 0, 0, 0, time.UTC)) {
		t.Errorf("dueTime = %s, %d missed; want 2026-11-23 01:00 UTC with 2 missed", due, missed)
	}
}

func TestBackupNamesFitTheLimit(t *testing.T) {
	long := strings.Repeat("a", appsv1alpha1.MaxMySQLNameLength)
	for _, suffix := range []string{"202611230200", preUpgradeSuffix(time.Now())} {
		for _, mysql := range []string{"db", long, long[:40] + "b"} {
			if name := resources.BackupName(mysql, suffix); len(name) > appsv1alpha1.MaxMySQLBackupNameLength || !strings.HasSuffix(name, suffix) {
				t.Errorf("BackupName(%s, %s) = %s (%d characters)", mysql, suffix, name, len(name))
			}
		}
	}
	if resources.BackupName(long, "x") == resources.BackupName(long[:50]+"bb", "x") {
		t.Error("two long MySQL names share a backup name")
	}
}
