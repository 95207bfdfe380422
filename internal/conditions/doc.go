// Package conditions derives the Available, Progressing, Degraded and Ready conditions from what a
// pass observed (workloads, pods, backups), and warns when an instance turns Degraded.
package conditions
