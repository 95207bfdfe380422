// Package testcluster starts what a test runs on or beside a cluster: local clusters, namespaces,
// the appkeeper binary as a process, a CA, the object store, Prometheus and prometheus-operator's
// CRDs. Unlike testservers it fails the test rather than returning an error.
package testcluster
