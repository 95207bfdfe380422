// Package podmonitor keeps a PodMonitor beside each monitored instance while prometheus-operator's
// PodMonitor kind is served, and leaves them alone while it is not.
package podmonitor
