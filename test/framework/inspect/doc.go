// Package inspect reads the objects appkeeper builds as their consumers do: an apply configuration
// as the API server decodes it, the exporter container of a monitored pod, the PodMonitor
// prometheus-operator follows, the PodDisruptionBudget a drain meets.
package inspect
