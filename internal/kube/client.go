package kube

import (
	"strings"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// fieldOwnerPrefix starts the name of every field manager of the operator. Each controller has a
// manager of its own, so that an object's managed fields tell which controller wrote what.
const fieldOwnerPrefix = "appkeeper-"

// LegacyFieldOwner is the one field manager every controller shared in earlier versions.
const LegacyFieldOwner = "appkeeper"

// Client is one controller's client: the manager's cached client, a reader that asks the API server
// for what the cache does not hold (the cache sees only objects labelled as managed by appkeeper),
// and the field manager under which the controller writes.
type Client struct {
	client.Client
	APIReader  client.Reader
	FieldOwner string
	// terminating, when set, holds the namespaces being deleted, where Client writes nothing.
	terminating *TerminatingNamespaces
}

// NewClient is the client of the controller named controllerName. With terminating, which every
// controller of the manager shares, it writes nothing in a namespace being deleted
// (SkipTerminatingNamespaces).
func NewClient(mgr ctrl.Manager, controllerName string, terminating *TerminatingNamespaces) Client {
	c := Client{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), FieldOwner: fieldOwnerPrefix + controllerName, terminating: terminating}
	if terminating != nil {
		c.Client = terminatingGuard{Client: c.Client, namespaces: terminating}
	}
	return c
}

// IsOperatorFieldOwner is true for a field manager name under which appkeeper writes.
func IsOperatorFieldOwner(manager string) bool {
	return manager == LegacyFieldOwner || strings.HasPrefix(manager, fieldOwnerPrefix)
}
