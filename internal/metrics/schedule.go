package metrics

import (
	"time"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/resources/mysql"
)

// The interval of a schedule is the longest gap between consecutive times among its next
// scheduleSamples, the first gap and those that end within scheduleHorizon: every day's schedule
// gives a day, one on weekdays only the weekend's three days, the age a backup reaches before the
// next one without anything being wrong, and a monthly one a month.
const (
	scheduleSamples = 1000
	scheduleHorizon = 32 * 24 * time.Hour
	// maxKnownSchedules bounds the memory of intervals already computed; there are about as many
	// schedules as MySQLs, and each is computed again only after the memory is cleared.
	maxKnownSchedules = 10000
)

// scheduleIntervals remembers the interval of each schedule and time zone, as walking a schedule
// costs more than the rest of a collection. Collections use it one at a time.
type scheduleIntervals struct {
	known map[scheduleKey]time.Duration
}

type scheduleKey struct{ schedule, zone string }

func newScheduleIntervals() *scheduleIntervals {
	return &scheduleIntervals{known: map[scheduleKey]time.Duration{}}
}

// of is the interval of a MySQL's backup schedule; false when there is no schedule, it is
// suspended, or it is invalid (the MySQL's Degraded condition says why) or never comes.
func (s *scheduleIntervals) of(policy *appsv1alpha1.MySQLBackupPolicy, now time.Time) (time.Duration, bool) {
	if policy == nil || policy.Suspend {
		return 0, false
	}
	key := scheduleKey{schedule: policy.Schedule}
	if policy.TimeZone != nil {
		key.zone = *policy.TimeZone
	}
	interval, ok := s.known[key]
	if !ok {
		if len(s.known) >= maxKnownSchedules {
			clear(s.known)
		}
		interval = longestGap(policy, now)
		s.known[key] = interval
	}
	return interval, interval > 0
}

// longestGap is the interval of policy's schedule from now, zero when it has none.
func longestGap(policy *appsv1alpha1.MySQLBackupPolicy, now time.Time) time.Duration {
	schedule, err := mysql.ParseSchedule(policy)
	if err != nil {
		return 0
	}
	var longest time.Duration
	at := schedule.Next(now)
	for range scheduleSamples {
		next := schedule.Next(at)
		if at.IsZero() || next.IsZero() || (longest > 0 && next.Sub(now) > scheduleHorizon) {
			break
		}
		longest = max(longest, next.Sub(at))
		at = next
	}
	return longest
}
