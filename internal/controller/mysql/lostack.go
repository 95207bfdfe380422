package mysql

import (
	"context"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/event"
	"github.com/appkeeper/appkeeper/internal/replication"
)

// releaseLostAcks ends the sessions of the open primary whose commits wait for an acknowledgement
// that a replica, holding them already, will never send again (replication.ReleaseLostAcks): once
// the primary has held waiting commits for replication.AckLostAfter, its binary log ending all the
// while where a replica's received position covers it. A commit whose acknowledgement is merely
// slow moves the binary log on within that time, by itself or by the commits queued behind it.
func (r *Reconciler) releaseLostAcks(ctx context.Context, m *appsv1alpha1.MySQL, members []replication.Member, views []replication.View) error {
	key := client.ObjectKeyFromObject(m)
	primary := replication.Named(members, m.Status.Primary)
	view, _ := viewOf(views, primary.Name)
	logged := view.Observation.Binlog
	if view.Observation.SemiSyncWaiting == 0 || !replication.ReceivedAll(views, primary, logged) {
		r.ackStalls.cleared(key)
		return nil
	}
	// The stall is of the primary at one position: a binary log that moved on starts another.
	if since := r.ackStalls.sinceWhen(key, primary.Name+" at "+logged.String(), time.Now()); time.Since(since) < replication.AckLostAfter {
		return nil
	}
	step, cancel := context.WithTimeout(ctx, replication.StepTimeout)
	defer cancel()
	ended, err := replication.ReleaseLostAcks(step, primary, replication.Except(members, primary.Name), logged)
	if err != nil {
		return fmt.Errorf("release the commits of the primary %s: %w", primary.Name, err)
	}
	r.ackStalls.cleared(key)
	if ended > 0 {
		event.AcksLost.Emit(r.Recorder, m, nil, "the primary %s held commits %s or more for an acknowledgement its replicas had already given, "+
			"lost when their connections broke: %d waiting sessions ended, their clients in doubt of writes a replica holds", primary.Name, replication.AckLostAfter, ended)
		log.FromContext(ctx).Info("ended sessions waiting for lost acknowledgements", "primary", primary.Name, "position", logged.String(), "sessions", ended)
	}
	return nil
}
