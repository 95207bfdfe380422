package kube

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
)

const (
	// namespaceRetry is how long the operator believes a namespace is being deleted after the API
	// server last said so: the namespace may be gone and made again under the same name since,
	// so that a pass then writes there again, and a refusal renews the belief.
	namespaceRetry = time.Minute
	// namespaceForgotten is how long after that a new refusal is news again, worth a log line.
	namespaceForgotten = 10 * time.Minute
	// creationSlack covers the creation timestamps the API server writes in whole seconds, and a
	// small difference between its clock and the operator's.
	creationSlack = 2 * time.Second
)

// TerminatingNamespaces remembers the namespaces being deleted, which the API server tells only by
// refusing to create anything in them. The deletion removes children that the operator would make
// again, each attempt refused: once a namespace is known to be going, no controller writes there
// and no pass runs for an object that was there before, until namespaceRetry has passed. One is
// shared by every controller of a manager; its zero value is not usable, call
// NewTerminatingNamespaces.
type TerminatingNamespaces struct {
	mu    sync.Mutex
	going map[string]*departure
}

type departure struct {
	// since is when the API server first refused a write there: an object created later is in a
	// namespace made again under the same name, as nothing can be created in one being deleted.
	since time.Time
	// until is when a pass may write there again.
	until time.Time
}

// NewTerminatingNamespaces knows of no namespace being deleted.
func NewTerminatingNamespaces() *TerminatingNamespaces {
	return &TerminatingNamespaces{going: map[string]*departure{}}
}

// refused records that the API server refused a write in namespace because it is being deleted,
// and tells whether that is news.
func (n *TerminatingNamespaces) refused(namespace string, now time.Time) (news bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for name, d := range n.going {
		if now.Sub(d.until) > namespaceForgotten {
			delete(n.going, name)
		}
	}
	d, known := n.going[namespace]
	switch {
	case !known:
		n.going[namespace] = &departure{since: now, until: now.Add(namespaceRetry)}
	case now.After(d.until):
		d.since, d.until = now, now.Add(namespaceRetry)
	default:
		d.until = now.Add(namespaceRetry)
	}
	return !known
}

// leaving is true while namespace is believed to be being deleted.
func (n *TerminatingNamespaces) leaving(namespace string, now time.Time) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	d, known := n.going[namespace]
	return known && !now.After(d.until)
}

// leftBehind is true when obj's namespace is believed to be being deleted and obj was there
// before. An object created since proves that the namespace was made again: the belief ends.
func (n *TerminatingNamespaces) leftBehind(obj client.Object, now time.Time) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	d, known := n.going[obj.GetNamespace()]
	if !known || now.After(d.until) {
		return false
	}
	if obj.GetCreationTimestamp().Add(creationSlack).Before(d.since) {
		return true
	}
	d.until = now
	return false
}

// Recorder wraps recorder so that it records no Event about an object in a namespace being
// deleted: the API server would refuse it.
func (n *TerminatingNamespaces) Recorder(recorder events.EventRecorder) events.EventRecorder {
	return quietRecorder{EventRecorder: recorder, namespaces: n}
}

type quietRecorder struct {
	events.EventRecorder
	namespaces *TerminatingNamespaces
}

func (r quietRecorder) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	if obj, err := meta.Accessor(regarding); err == nil && r.namespaces.leaving(obj.GetNamespace(), time.Now()) {
		return
	}
	r.EventRecorder.Eventf(regarding, related, eventtype, reason, action, note, args...)
}

// SkipTerminatingNamespaces wraps r, which reconciles objects like kind, so that it runs no pass
// for an object left behind in a namespace being deleted, and so that a pass that failed because
// the namespace is being deleted ends without an error, to be neither logged nor retried: the
// deletion will remove the object, and its watch tells of it. Without the namespaces of
// NewClient, r is returned as it is.
func (c Client) SkipTerminatingNamespaces(kind client.Object, r crreconcile.Reconciler) crreconcile.Reconciler {
	if c.terminating == nil {
		return r
	}
	return skipTerminating{next: r, reader: c.Client, kind: kind, namespaces: c.terminating}
}

type skipTerminating struct {
	next       crreconcile.Reconciler
	reader     client.Reader
	kind       client.Object
	namespaces *TerminatingNamespaces
}

func (s skipTerminating) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if s.namespaces.leaving(req.Namespace, time.Now()) {
		obj := s.kind.DeepCopyObject().(client.Object)
		err := s.reader.Get(ctx, req.NamespacedName, obj)
		if apierrors.IsNotFound(err) || err == nil && s.namespaces.leftBehind(obj, time.Now()) {
			return ctrl.Result{}, nil
		}
	}
	result, err := s.next.Reconcile(ctx, req)
	if namespaceTerminating(err) {
		return ctrl.Result{}, nil
	}
	return result, err
}

// namespaceTerminating is true when err is or joins the API server's refusal to create an object
// in a namespace being deleted, or the same refusal that the operator made itself.
func namespaceTerminating(err error) bool {
	return apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause)
}

// errNamespaceTerminating is the refusal of a write in namespace, made without asking the API
// server, in the words it would use.
func errNamespaceTerminating(namespace string) error {
	err := apierrors.NewForbidden(schema.GroupResource{}, "",
		fmt.Errorf("unable to create new content in namespace %s because it is being terminated", namespace))
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{
		Type: corev1.NamespaceTerminatingCause, Message: fmt.Sprintf("namespace %s is being terminated", namespace), Field: "metadata.namespace",
	})
	return err
}
