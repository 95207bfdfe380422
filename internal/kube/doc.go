// Package kube is the operator's view of the cluster: each controller's client (the cache, a reader
// past it, its own field manager), the guard that writes nothing in a namespace being deleted, and
// the watches that link pods and freed names to the instances they concern.
package kube
