package kubectlplugin

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/binlog"
	backupresources "github.com/appkeeper/appkeeper/internal/resources/mysqlbackup"
)

// pointInTime is the restore's target from --time or --gtid, nil without either.
func (o restoreOptions) pointInTime() (*appsv1alpha1.PointInTimeTarget, error) {
	switch {
	case o.time != "" && o.gtid != "":
		return nil, usagef("give --time or --gtid, not both")
	case o.time != "":
		t, err := time.Parse(time.RFC3339, o.time)
		if err != nil {
			return nil, usagef("--time %q is not an RFC 3339 time such as 2026-11-27T10:41:59Z", o.time)
		}
		return &appsv1alpha1.PointInTimeTarget{Time: &metav1.Time{Time: t.Truncate(time.Second)}}, nil
	case o.gtid != "":
		if _, err := binlog.ParseGTID(o.gtid); err != nil {
			return nil, usagef("--gtid: %v", err)
		}
		return &appsv1alpha1.PointInTimeTarget{GTID: o.gtid}, nil
	}
	return nil, nil
}

// checkWindow refuses a target outside the window the model's status shows, naming it.
func checkWindow(model client.Object, target *appsv1alpha1.PointInTimeTarget) error {
	m, ok := model.(*appsv1alpha1.MySQL)
	if !ok || target.Time == nil || m.Status.PointInTimeRecovery == nil {
		return nil
	}
	p := m.Status.PointInTimeRecovery
	if p.RecoverableFrom == nil || p.RecoverableTo == nil {
		return fmt.Errorf("mysql/%s cannot be restored to a point in time now: %s", m.Name, p.Message)
	}
	if target.Time.Before(p.RecoverableFrom) || p.RecoverableTo.Before(target.Time) {
		return fmt.Errorf("--time %s is outside what the archive of mysql/%s can restore: from %s to %s",
			target.Time.UTC().Format(time.RFC3339), m.Name, p.RecoverableFrom.UTC().Format(time.RFC3339), p.RecoverableTo.UTC().Format(time.RFC3339))
	}
	return nil
}

// chooseBase names the newest backup of the MySQL name that a replay to target can start from.
func chooseBase(ctx context.Context, c client.Client, ns, name string, policy *appsv1alpha1.MySQLBackupPolicy, target *appsv1alpha1.PointInTimeTarget) (string, error) {
	list := &appsv1alpha1.MySQLBackupList{}
	if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
		return "", apiError(err, "mysqlbackups in namespace "+ns)
	}
	best := backupresources.NewestBaseBefore(list.Items, name, policy, target)
	if best == nil {
		return "", fmt.Errorf("no backup of mysql/%s completed before the target was taken with its binary log archived: give one with --from, or restore to a later point", name)
	}
	return best.Name, nil
}

// pointNote says where the replay stops, for the line that tells what was created.
func pointNote(point *appsv1alpha1.PointInTimeTarget) string {
	switch {
	case point == nil:
		return ""
	case point.Time != nil:
		return " and its archive up to " + point.Time.UTC().Format(time.RFC3339)
	}
	return " and its archive through " + point.GTID
}
