// Package backup is the data path of MySQL backups: the `appkeeper backup` subcommands that the
// operator's Jobs run. They dump a server with its own mysqldump, compress, optionally encrypt and
// checksum the dump, write it and a manifest of every table's row count and checksum to object
// storage or a volume, fetch it back for a restore, verify a restored server against the manifest,
// and delete what retention prunes. They do the same for a folder, such as a WordPress site's
// wp-content, which with the site's database dump makes its restore point.
//
// This file is the contract between the operator, which builds the Jobs, and the subcommands:
// their names, flags, environment and the result they report.
package backup

import (
	"strconv"
	"strings"
)

// Subcommands of `appkeeper backup`.
const (
	// CommandInstall copies the running binary to the path given as its only argument, so that a
	// container of another image (the MySQL server's) can run it.
	CommandInstall = "install"
	// CommandDump dumps the server at --host as --user into the target, then deletes the keys
	// given by --prune. It runs in the MySQL server's image, where mysqldump is.
	CommandDump = "dump"
	// CommandFetch writes the target's artifact, checked against its manifest and decrypted, as a
	// gzip-compressed SQL file at --out, which a MySQL image's entrypoint loads from
	// /docker-entrypoint-initdb.d on its first start. With --unless-initialized DIR it does
	// nothing when DIR already holds a data directory.
	CommandFetch = "fetch"
	// CommandArchive writes a tar of the folder --dir to the target as a content backup:
	// regular files, folders and symlinks with their modes and modification times (to the
	// second), not their owners, since extract's files belong to the user it runs as. The tar
	// is compressed and, when EnvEncryptionKey is set, encrypted; its manifest is written last.
	// Then it deletes the content backups of the keys given by --prune. The folder may change
	// while it is read (a live site): a file that vanishes is left out.
	CommandArchive = "archive"
	// CommandExtract checks the target's content backup against its manifest, decrypts it and
	// extracts it into the empty folder --dir. The entries are written into a temporary folder
	// inside --dir and moved into place only once the whole archive is extracted and verified,
	// so a failure leaves --dir empty. With --unless-nonempty it does nothing when --dir already
	// holds an entry: the site is restarting, or its volume has data.
	CommandExtract = "extract"
	// CommandVerify waits for the server at --host, then compares the row count and checksum of
	// every table the target's manifest lists with the server's.
	CommandVerify = "verify"
	// CommandShip ships the binary log of the server at --host, read from its files, to the
	// archive at the target's key while the server is a primary, until it is stopped.
	CommandShip = "ship"
	// CommandReplay writes to --out, as SQL, the archived transactions that follow the backup at
	// the target's key, up to --until-time or --until-gtid; a target outside what the archive at
	// --archive holds fails, naming the window.
	CommandReplay = "replay"
)

// Environment variables the subcommands read secrets from; the Jobs set them only from Secrets,
// by secretKeyRef.
const (
	// EnvMySQLPassword is the password of --user (the mysql clients read the same variable).
	EnvMySQLPassword = "MYSQL_PWD"
	// EnvAccessKeyID and EnvSecretAccessKey are the S3 credentials.
	EnvAccessKeyID     = "AWS_ACCESS_KEY_ID"
	EnvSecretAccessKey = "AWS_SECRET_ACCESS_KEY"
	// EnvEncryptionKey is the passphrase: dump encrypts with it when set, fetch decrypts with it.
	EnvEncryptionKey = "APPKEEPER_ENCRYPTION_KEY"
)

// EnvImage names the operator's own image in its Deployment: the image the backup Jobs run this
// binary from.
const EnvImage = "APPKEEPER_IMAGE"

// File name extensions of a backup's objects: the artifact is <key>.sql.gz, or <key>.sql.gz.age
// when encrypted; the manifest <key>.json is written last, so a key without a manifest holds no
// complete backup.
const (
	artifactExtension          = ".sql.gz"
	encryptedArtifactExtension = ".sql.gz.age"
	manifestExtension          = ".json"
)

// File name extensions of a content backup, a folder's archive: the artifact is
// <key>.content.tar.gz, or <key>.content.tar.gz.age when encrypted; the manifest
// <key>.content.json is written last. A site's restore point is its database backup and its
// content backup, which may share a key.
const (
	contentArtifactExtension          = ".content.tar.gz"
	encryptedContentArtifactExtension = ".content.tar.gz.age"
	contentManifestExtension          = ".content.json"
)

// Flag names shared by the subcommands.
const (
	flagS3Endpoint     = "s3-endpoint"
	flagS3Bucket       = "s3-bucket"
	flagS3Region       = "s3-region"
	flagS3PathStyle    = "s3-path-style"
	flagS3CAFile       = "s3-ca-file"
	flagVolume         = "volume"
	flagKey            = "key"
	FlagHost           = "host"
	FlagPort           = "port"
	FlagUser           = "user"
	FlagPrune          = "prune"
	FlagOut            = "out"
	FlagUnlessInit     = "unless-initialized"
	flagResult         = "result"
	flagWaitTimeout    = "wait-timeout"
	flagInterval       = "interval"
	flagCompressLevel  = "compress-level"
	FlagDir            = "dir"
	FlagUnlessNonEmpty = "unless-nonempty"
	FlagCatchUpHost    = "catch-up-host"
	// FlagBinlogArchive names the key of a binary log archive: recorded by a dump, read by a replay.
	FlagBinlogArchive = "binlog-archive"
	// FlagUntilTime and FlagUntilGTID are where a replay stops.
	FlagUntilTime = "until-time"
	// FlagStatusAddress is where the shipper serves its status.
	FlagStatusAddress = "status-address"
	FlagUntilGTID     = "until-gtid"
)

// Target is where a backup is: a bucket of an S3-compatible store or a mounted folder, and the key
// of the backup in it.
type Target struct {
	// S3Endpoint is the store's URL (http:// or https://); empty for a volume.
	S3Endpoint string
	S3Bucket   string
	S3Region   string
	// S3PathStyle addresses the bucket in the URL's path.
	S3PathStyle bool
	// S3CAFile is a PEM file of the certificate authorities an https endpoint is checked against,
	// besides the system's.
	S3CAFile string
	// Volume is the folder where the claim is mounted; empty for S3.
	Volume string
	// Key of the backup, without extension: <prefix><namespace>/<mysql>/<backup>.
	Key string
}

// Args are the flags that give a subcommand the target.
func (t Target) Args() []string {
	var args []string
	flag := func(name, value string) {
		if value != "" {
			args = append(args, "--"+name+"="+value)
		}
	}
	flag(flagS3Endpoint, t.S3Endpoint)
	flag(flagS3Bucket, t.S3Bucket)
	flag(flagS3Region, t.S3Region)
	if t.S3PathStyle {
		flag(flagS3PathStyle, strconv.FormatBool(true))
	}
	flag(flagS3CAFile, t.S3CAFile)
	flag(flagVolume, t.Volume)
	flag(flagKey, t.Key)
	return args
}

// Result is what a subcommand reports in its container's termination message (at most 4096
// bytes, so it carries counts, not the per-table list) and on stdout, as one JSON object.
type Result struct {
	// Key of the backup.
	Key string `json:"key,omitempty"`
	// Artifact is the artifact's key with its extension.
	Artifact string `json:"artifact,omitempty"`
	// Size of the artifact as stored, in bytes.
	Size int64 `json:"size,omitempty"`
	// SHA256 of the artifact as stored, in hex.
	SHA256    string `json:"sha256,omitempty"`
	Encrypted bool   `json:"encrypted,omitempty"`
	// ServerVersion is SELECT VERSION() at the dump.
	ServerVersion string `json:"serverVersion,omitempty"`
	// BinlogPosition is "file:position" at the dump, empty without a binary log.
	BinlogPosition string `json:"binlogPosition,omitempty"`
	// GTIDPosition is MariaDB's @@gtid_binlog_pos at the dump: where a replay of the archived
	// binary log begins. Empty on MySQL.
	GTIDPosition string `json:"gtidPosition,omitempty"`
	Databases    int    `json:"databases,omitempty"`
	Tables       int    `json:"tables,omitempty"`
	// Files is the number of regular files of a content backup; Bytes is their total size.
	Files int   `json:"files,omitempty"`
	Bytes int64 `json:"bytes,omitempty"`
	// Pruned are the keys deleted after the dump succeeded.
	Pruned []string `json:"pruned,omitempty"`
	// Verified is set by verify (and by fetch and extract when the artifact is corrupt): true when
	// every table matched, false when the artifact or a table did not.
	Verified *bool `json:"verified,omitempty"`
	// Mismatches describes, for a failed verification, the first tables that differ (bounded).
	Mismatches []string `json:"mismatches,omitempty"`
	// Replayed counts the archived transactions a replay wrote, the last being ReplayedThrough;
	// Window is what the archive can restore from the base backup.
	Replayed        int     `json:"replayed,omitempty"`
	ReplayedThrough string  `json:"replayedThrough,omitempty"`
	Window          *Window `json:"window,omitempty"`
	// Error is why the subcommand failed; it never holds a password or key.
	Error string `json:"error,omitempty"`
}

// PruneArgs are the --prune flags for the keys a dump or an archive deletes once it has
// succeeded.
func PruneArgs(keys []string) []string {
	args := make([]string, 0, len(keys))
	for _, key := range keys {
		args = append(args, "--"+FlagPrune+"="+key)
	}
	return args
}

// ArtifactKey is the key of the artifact of a backup.
func ArtifactKey(key string, encrypted bool) string {
	if encrypted {
		return key + encryptedArtifactExtension
	}
	return key + artifactExtension
}

// manifestKey is the key of the manifest of a backup.
func manifestKey(key string) string { return strings.TrimSuffix(key, "/") + manifestExtension }

// contentArtifactKey is the key of the artifact of a content backup.
func contentArtifactKey(key string, encrypted bool) string {
	if encrypted {
		return key + encryptedContentArtifactExtension
	}
	return key + contentArtifactExtension
}

// contentManifestKey is the key of the manifest of a content backup.
func contentManifestKey(key string) string {
	return strings.TrimSuffix(key, "/") + contentManifestExtension
}

// The account backups connect as. The operator creates it, with a password of its own, each time
// the server starts (mysqld's init-file), from any host: a backup Job runs in its own pod.
const (
	AccountUser = "appkeeper_backup"
	// AccountPrivileges are what a consistent dump needs and no more: reading every table, view,
	// trigger, routine and event; a brief global read lock and the binary log position, so that
	// the dump's snapshot and the manifest's checksums are taken at one instant; and the process
	// list, to see when mysqldump's snapshot has begun.
	AccountPrivileges = "SELECT, SHOW VIEW, TRIGGER, LOCK TABLES, EVENT, RELOAD, PROCESS, REPLICATION CLIENT"
)
