package mysql

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/backup"
	"github.com/appkeeper/appkeeper/internal/binlog"
	resources "github.com/appkeeper/appkeeper/internal/resources/mysql"
)

// shipperReadInterval is how often the primary's shipper is asked how far it shipped: the
// window a status shows is at most this much older than the archive.
const shipperReadInterval = 5 * time.Second

// shipperReadings remembers, per MySQL, what its shipper last said and when, so that the
// passes between two readings (a cluster is probed every second) reuse it.
type shipperReadings struct {
	mu   sync.Mutex
	last map[types.UID]shipperReading
}

type shipperReading struct {
	at     time.Time
	member string
	status backup.ShipperStatus
	err    error
}

var shipperClient = &http.Client{Timeout: 2 * time.Second}

// observeArchive reads, at most every shipperReadInterval, what the primary's shipper says, and
// sets what the status reports of the archive; it returns when to look again.
func (r *Reconciler) observeArchive(ctx context.Context, m *appsv1alpha1.MySQL, seen *observed, now time.Time) time.Duration {
	if !m.Spec.Backup.PointInTimeRecoveryEnabled() {
		r.shippers.forget(m.UID)
		return 0
	}
	reading, fresh := r.shippers.get(m.UID, now)
	if !fresh {
		reading = readShipper(ctx, primaryPod(m, seen.pods))
		reading.at = now
		r.shippers.put(m.UID, reading)
	}
	seen.archive, seen.archiveRead = archiveStatus(m.Spec.Backup, reading, seen.backups), true
	return shipperReadInterval
}

// primaryPod is the pod of the member that ships: a cluster's recorded primary, or the one
// server.
func primaryPod(m *appsv1alpha1.MySQL, pods []corev1.Pod) *corev1.Pod {
	name := m.Status.Primary
	if !m.Clustered() {
		name = m.ChildName() + "-0"
	}
	for i := range pods {
		if pods[i].Name == name && pods[i].DeletionTimestamp == nil {
			return &pods[i]
		}
	}
	return nil
}

func readShipper(ctx context.Context, pod *corev1.Pod) shipperReading {
	if pod == nil || pod.Status.PodIP == "" {
		return shipperReading{err: fmt.Errorf("the primary has no running pod")}
	}
	reading := shipperReading{member: pod.Name}
	url := "http://" + net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(resources.ShipperStatusPort)) + backup.ShipperStatusPath
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		reading.err = err
		return reading
	}
	resp, err := shipperClient.Do(req)
	if err != nil {
		reading.err = err
		return reading
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		reading.err = fmt.Errorf("GET %s: %s", backup.ShipperStatusPath, resp.Status)
		return reading
	}
	reading.err = json.NewDecoder(resp.Body).Decode(&reading.status)
	return reading
}

// archiveStatus is what the status says of the archive, from the shipper's reading and the
// backups: the window opens at the oldest backup the archive follows without a gap.
func archiveStatus(policy *appsv1alpha1.MySQLBackupPolicy, reading shipperReading, backups []appsv1alpha1.MySQLBackup) *appsv1alpha1.PointInTimeRecoveryStatus {
	s := reading.status
	status := &appsv1alpha1.PointInTimeRecoveryStatus{Member: reading.member}
	switch {
	case reading.err != nil:
		status.Message = fmt.Sprintf("the shipper of %s cannot be read: %v", reading.member, reading.err)
		return status
	case s.Error != "":
		status.Message = fmt.Sprintf("the shipper of %s fails: %s", reading.member, s.Error)
	case !s.Shipping:
		status.Message = fmt.Sprintf("the shipper of %s does not ship: its server is not open to writes yet", reading.member)
	}
	// A shipper that keeps up was caught up a look ago: a lag within one reading says nothing,
	// and reporting it would rewrite the status of an idle MySQL at every reading.
	if s.LagSeconds > shipperReadInterval.Seconds() {
		status.LagSeconds = int64(math.Ceil(s.LagSeconds))
	}
	status.LastArchivedGTID = s.LastShipped
	if s.ArchiveLastTime != nil {
		status.RecoverableTo = &metav1.Time{Time: s.ArchiveLastTime.Add(time.Second)}
	}
	if base := oldestBase(policy, backups, s.Domain, s.ArchiveAfter); base != nil {
		status.RecoverableFrom, status.RecoverableFromBackup = base.Status.CompletionTime, base.Name
	} else if status.Message == "" {
		status.Message = fmt.Sprintf("no backup follows the start of the archive (sequence number %d of domain %d): "+
			"a restore to a point in time starts from a backup taken while the archive was on", s.ArchiveAfter, s.Domain)
	}
	return status
}

// oldestBase is the oldest backup that succeeded holding sequence number after or a later one
// of domain, so that the archive replays from it without a gap.
func oldestBase(policy *appsv1alpha1.MySQLBackupPolicy, backups []appsv1alpha1.MySQLBackup, domain uint32, after uint64) *appsv1alpha1.MySQLBackup {
	var oldest *appsv1alpha1.MySQLBackup
	for i := range backups {
		b := &backups[i]
		// A backup elsewhere than spec.backup's storage is not beside the archive; one of a server
		// without a binary log has no position to replay from.
		if b.Status.Phase != appsv1alpha1.BackupSucceeded || b.Status.CompletionTime == nil || !policy.KeepsBeside(b.Spec.Storage) || b.Status.BinlogPosition == "" {
			continue
		}
		position, err := binlog.ParsePosition(b.Status.GTIDPosition)
		if err != nil || binlog.SeqIn(position, domain) < after {
			continue
		}
		if oldest == nil || b.Status.CompletionTime.Before(oldest.Status.CompletionTime) {
			oldest = b
		}
	}
	return oldest
}

func (s *shipperReadings) get(uid types.UID, now time.Time) (shipperReading, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	reading, ok := s.last[uid]
	return reading, ok && now.Sub(reading.at) < shipperReadInterval
}

func (s *shipperReadings) put(uid types.UID, reading shipperReading) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last == nil {
		s.last = map[types.UID]shipperReading{}
	}
	s.last[uid] = reading
}

// latest is the last reading of uid's shipper, however old.
func (s *shipperReadings) latest(uid types.UID) (shipperReading, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	reading, ok := s.last[uid]
	return reading, ok
}

func (s *shipperReadings) forget(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.last, uid)
}
