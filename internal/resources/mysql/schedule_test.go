package mysql

import (
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

func TestScheduleErrorsNameTheField(t *testing.T) {
	for policy, field := range map[*appsv1alpha1.MySQLBackupPolicy]string{
		{Schedule: "every day"}:                                   "spec.backup.schedule",
		{Schedule: "0 2 * * *", TimeZone: ptr.To("Mars/Olympus")}: "spec.backup.timeZone",
	} {
		if _, err := ParseSchedule(policy); err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("ParseSchedule(%+v) = %v, want an error naming %s", policy, err, field)
		}
	}
}
