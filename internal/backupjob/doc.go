// Package backupjob is what the controllers that take and restore backups share about the Jobs
// they run, and the index that finds a MySQL's backups. It stands apart so that those controllers
// depend on it rather than on one another. A Job reports its result only in its pods' termination
// messages, and a controller records that result once, so the reading here is careful about a
// cache that lags: it must not decide an outcome from pods it has not seen end.
package backupjob
