// Package event is the catalog of the Events the operator records: each kind of Event fixes its
// type, reason and action once, so that the reasons users match on with `kubectl get events
// --field-selector reason=...` or in alerts cannot drift from one call site to another.
package event
