package mysql

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/robfig/cron/v3"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/failure"
)

// ParseSchedule reads spec.backup's schedule in its time zone.
func ParseSchedule(policy *appsv1alpha1.MySQLBackupPolicy) (cron.Schedule, error) {
	zone := time.UTC
	if policy.TimeZone != nil && *policy.TimeZone != "" {
		z, err := time.LoadLocation(*policy.TimeZone)
		if err != nil {
			return nil, &failure.InvalidSpecError{Message: fmt.Sprintf("spec.backup.timeZone: %q is not a known time zone", *policy.TimeZone)}
		}
		zone = z
	}
	schedule, err := cron.ParseStandard(policy.Schedule)
	if err != nil {
		return nil, &failure.InvalidSpecError{Message: fmt.Sprintf("spec.backup.schedule: %q is not a cron schedule: %v", policy.Schedule, err)}
	}
	if s, ok := schedule.(*cron.SpecSchedule); ok {
		s.Location = zone
	}
	return schedule, nil
}

// BackupName is the name of a backup the MySQL named mysql takes, ending in suffix, within the
// MySQLBackup name limit: a long MySQL name is shortened and made unique with a hash.
func BackupName(mysql, suffix string) string {
	limit := appsv1alpha1.MaxMySQLBackupNameLength - len(suffix) - 1
	if len(mysql) > limit {
		sum := sha256.Sum256([]byte(mysql))
		mysql = mysql[:limit-6] + "-" + hex.EncodeToString(sum[:])[:5]
	}
	return mysql + "-" + suffix
}
