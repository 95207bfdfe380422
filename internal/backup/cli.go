package backup

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"
)

// Exit codes of the subcommands.
const (
	exitOK     = 0
	exitFailed = 1
	exitUsage  = 2
)

// Env reads the environment, os.Getenv in a Job.
type Env func(name string) string

// Main runs `appkeeper backup COMMAND [flags]` with args (COMMAND first) and returns the exit
// code. Secrets come from env, never from flags, so that they stay out of the pod's spec.
func Main(ctx context.Context, args []string, env Env, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintf(stderr, "Usage: appkeeper backup %s [flags]\n",
			strings.Join([]string{CommandInstall, CommandDump, CommandFetch, CommandVerify, CommandArchive, CommandExtract, CommandShip, CommandReplay}, "|"))
		return exitUsage
	}
	command := args[0]
	fs := flag.NewFlagSet("appkeeper backup "+command, flag.ContinueOnError)
	fs.SetOutput(stderr)
	run := bindCommand(ctx, command, fs, env, stderr)
	if run == nil {
		fmt.Fprintf(stderr, "appkeeper backup: unknown command %q\n", command)
		return exitUsage
	}
	result := fs.String(flagResult, "", "file the result is written to as JSON (default "+terminationLog+" when it is writable)")
	switch err := fs.Parse(args[1:]); {
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case err != nil:
		return exitUsage
	}
	resultFile := *result
	if !flagSet(fs, flagResult) {
		resultFile = defaultResultFile()
	}
	res, err := run()
	var usage usageError
	if errors.As(err, &usage) {
		fmt.Fprintf(stderr, "appkeeper backup %s: %v\n", command, err)
		return exitUsage
	}
	if err != nil && ctx.Err() != nil {
		err = fmt.Errorf("stopped by a signal before it completed: %w", err)
	}
	if err != nil {
		res.Error = err.Error()
		fmt.Fprintf(stderr, "appkeeper backup %s: %v\n", command, err)
	}
	// install has nothing to report but a failure.
	if command != CommandInstall || err != nil {
		if werr := writeResult(res, stdout, resultFile); werr != nil {
			fmt.Fprintf(stderr, "appkeeper backup %s: %v\n", command, werr)
			return exitFailed
		}
	}
	if err != nil {
		return exitFailed
	}
	return exitOK
}

// bindCommand defines the flags of command on fs and returns what runs it once they are parsed;
// nil for an unknown command.
func bindCommand(ctx context.Context, command string, fs *flag.FlagSet, env Env, stderr io.Writer) func() (Result, error) {
	switch command {
	case CommandInstall:
		fs.Usage = func() { fmt.Fprintf(stderr, "Usage: appkeeper backup %s DEST\n", CommandInstall) }
		return func() (Result, error) { return Result{}, installArgs(fs.Args()) }
	case CommandDump:
		return dumpCommand(ctx, fs, env)
	case CommandFetch:
		return fetchCommand(ctx, fs, env)
	case CommandVerify:
		return verifyCommand(ctx, fs, env)
	case CommandArchive:
		return archiveCommand(ctx, fs, env)
	case CommandExtract:
		return extractCommand(ctx, fs, env)
	case CommandShip:
		return shipCommand(ctx, fs, env, stderr)
	case CommandReplay:
		return replayCommand(ctx, fs, env)
	}
	return nil
}

// usageError is a mistake in the command line rather than a failure.
type usageError struct{ error }

func installArgs(args []string) error {
	if len(args) != 1 {
		return usageError{fmt.Errorf("want one argument, the destination, got %d", len(args))}
	}
	return install(args[0])
}

func dumpCommand(ctx context.Context, fs *flag.FlagSet, env Env) func() (Result, error) {
	o := DumpOptions{}
	bindTarget(fs, &o.Target)
	bindConnection(fs, &o.Connection, AccountUser)
	fs.Func(FlagPrune, "key of a backup to delete once this one is complete (repeatable)", func(key string) error {
		o.Prune = append(o.Prune, key)
		return nil
	})
	fs.IntVar(&o.CompressLevel, flagCompressLevel, DefaultCompressLevel, "gzip level, 0 (none) to 9 (smallest)")
	fs.StringVar(&o.BinlogArchive, FlagBinlogArchive, "", "key of the server's binary log archive, recorded in the manifest")
	fs.StringVar(&o.CatchUpHost, FlagCatchUpHost, "", "primary whose every transaction --host, a replica, applies before the dump (same port and account)")
	return func() (Result, error) {
		if err := requireArgs(fs); err != nil {
			return Result{}, err
		}
		o.Credentials, o.Connection.Password, o.EncryptionKey = credentialsFrom(env), env(EnvMySQLPassword), env(EnvEncryptionKey)
		return Dump(ctx, o)
	}
}

func fetchCommand(ctx context.Context, fs *flag.FlagSet, env Env) func() (Result, error) {
	o := FetchOptions{}
	bindTarget(fs, &o.Target)
	fs.StringVar(&o.Out, FlagOut, "", "file the gzip-compressed SQL is written to")
	fs.StringVar(&o.UnlessInitialized, FlagUnlessInit, "", "fetch nothing when this data directory is already initialised")
	return func() (Result, error) {
		if err := requireArgs(fs); err != nil {
			return Result{}, err
		}
		o.Credentials, o.EncryptionKey = credentialsFrom(env), env(EnvEncryptionKey)
		return Fetch(ctx, o)
	}
}

func verifyCommand(ctx context.Context, fs *flag.FlagSet, env Env) func() (Result, error) {
	o := VerifyOptions{}
	bindTarget(fs, &o.Target)
	bindConnection(fs, &o.Connection, "root")
	fs.DurationVar(&o.WaitTimeout, flagWaitTimeout, defaultWaitTimeout, "how long to wait for the server to accept connections")
	return func() (Result, error) {
		if err := requireArgs(fs); err != nil {
			return Result{}, err
		}
		o.Credentials, o.Connection.Password = credentialsFrom(env), env(EnvMySQLPassword)
		return Verify(ctx, o)
	}
}

func archiveCommand(ctx context.Context, fs *flag.FlagSet, env Env) func() (Result, error) {
	o := archiveOptions{}
	bindTarget(fs, &o.Target)
	fs.StringVar(&o.Dir, FlagDir, "", "folder to archive")
	fs.Func(FlagPrune, "key of a content backup to delete once this one is complete (repeatable)", func(key string) error {
		o.Prune = append(o.Prune, key)
		return nil
	})
	fs.IntVar(&o.CompressLevel, flagCompressLevel, DefaultCompressLevel, "gzip level, 0 (none) to 9 (smallest)")
	return func() (Result, error) {
		if err := requireArgs(fs); err != nil {
			return Result{}, err
		}
		o.Credentials, o.EncryptionKey = credentialsFrom(env), env(EnvEncryptionKey)
		return archive(ctx, o)
	}
}

func extractCommand(ctx context.Context, fs *flag.FlagSet, env Env) func() (Result, error) {
	o := extractOptions{}
	bindTarget(fs, &o.Target)
	fs.StringVar(&o.Dir, FlagDir, "", "empty folder the archive is extracted into")
	fs.BoolVar(&o.UnlessNonEmpty, FlagUnlessNonEmpty, false, "extract nothing when the folder already holds an entry")
	return func() (Result, error) {
		if err := requireArgs(fs); err != nil {
			return Result{}, err
		}
		o.Credentials, o.EncryptionKey = credentialsFrom(env), env(EnvEncryptionKey)
		return extract(ctx, o)
	}
}

func shipCommand(ctx context.Context, fs *flag.FlagSet, env Env, stderr io.Writer) func() (Result, error) {
	o := ShipOptions{}
	bindTarget(fs, &o.Target)
	bindConnection(fs, &o.Connection, AccountUser)
	fs.DurationVar(&o.Interval, flagInterval, DefaultShipInterval, "how often the binary log is looked at")
	fs.StringVar(&o.StatusAddress, FlagStatusAddress, "", "address GET "+ShipperStatusPath+" is served at, such as :9106")
	return func() (Result, error) {
		if err := requireArgs(fs); err != nil {
			return Result{}, err
		}
		o.Credentials, o.Connection.Password, o.EncryptionKey = credentialsFrom(env), env(EnvMySQLPassword), env(EnvEncryptionKey)
		o.Log = slog.New(slog.NewTextHandler(stderr, nil))
		return Result{}, Ship(ctx, o)
	}
}

func replayCommand(ctx context.Context, fs *flag.FlagSet, env Env) func() (Result, error) {
	o := ReplayOptions{}
	bindTarget(fs, &o.Target)
	fs.StringVar(&o.Archive, FlagBinlogArchive, "", "key of the binary log archive (default: the one the backup's manifest names)")
	fs.StringVar(&o.Out, FlagOut, "", "file the SQL is written to")
	fs.Func(FlagUntilTime, "RFC 3339 time: replay the transactions committed before it", func(s string) error {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return fmt.Errorf("%q is not an RFC 3339 time such as 2026-11-27T10:41:59Z", s)
		}
		o.UntilTime = t
		return nil
	})
	fs.StringVar(&o.UnlessInitialized, FlagUnlessInit, "", "replay nothing when this data directory is already initialised")
	fs.StringVar(&o.UntilGTID, FlagUntilGTID, "", "GTID of the last transaction to replay, such as 0-1-1234")
	return func() (Result, error) {
		if err := requireArgs(fs); err != nil {
			return Result{}, err
		}
		if o.Out == "" {
			return Result{}, usageError{fmt.Errorf("--%s is required", FlagOut)}
		}
		o.Credentials, o.EncryptionKey = credentialsFrom(env), env(EnvEncryptionKey)
		return Replay(ctx, o)
	}
}

func bindTarget(fs *flag.FlagSet, t *Target) {
	fs.StringVar(&t.S3Endpoint, flagS3Endpoint, "", "URL of the S3-compatible store (http:// or https://)")
	fs.StringVar(&t.S3Bucket, flagS3Bucket, "", "bucket of the backups")
	fs.StringVar(&t.S3Region, flagS3Region, "us-east-1", "region of the bucket")
	fs.BoolVar(&t.S3PathStyle, flagS3PathStyle, false, "address the bucket in the URL's path")
	fs.StringVar(&t.S3CAFile, flagS3CAFile, "", "PEM file of certificate authorities to trust besides the system's")
	fs.StringVar(&t.Volume, flagVolume, "", "folder where the backup volume is mounted")
	fs.StringVar(&t.Key, flagKey, "", "key of the backup, without extension")
}

func bindConnection(fs *flag.FlagSet, c *Connection, user string) {
	fs.StringVar(&c.Host, FlagHost, "", "host of the MySQL server")
	fs.IntVar(&c.Port, FlagPort, 3306, "port of the MySQL server")
	fs.StringVar(&c.User, FlagUser, user, "user to connect as; its password is "+EnvMySQLPassword)
}

func credentialsFrom(env Env) Credentials {
	return Credentials{AccessKeyID: env(EnvAccessKeyID), SecretAccessKey: env(EnvSecretAccessKey)}
}

func requireArgs(fs *flag.FlagSet) error {
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))}
	}
	return nil
}

func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
