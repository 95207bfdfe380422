package seed

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	stdlog "log"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Subcommands of `appkeeper member`.
const (
	CommandSeed   = "seed"
	CommandDonate = "donate"
)

// Environment variables the subcommands read their secrets from, never flags.
const (
	// EnvSecret holds the cluster's secret, which a receiver proves it holds.
	EnvSecret = "APPKEEPER_SEED_SECRET"
	// EnvRootPassword is root's password, which the brief server after a copy logs in with.
	EnvRootPassword = "MYSQL_ROOT_PASSWORD"
)

// DonorPort is where the donor beside each member listens.
const DonorPort = 3307

// Main runs `appkeeper member COMMAND [flags]` and returns the exit code.
func Main(ctx context.Context, args []string, env func(string) string, stderr io.Writer) int {
	log := slog.New(slog.NewTextHandler(stderr, nil))
	if len(args) == 0 {
		fmt.Fprintf(stderr, "Usage: appkeeper member %s|%s [flags]\n", CommandSeed, CommandDonate)
		return 2
	}
	fs := flag.NewFlagSet("appkeeper member "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := fs.String("data-dir", "/var/lib/mysql", "the member's data folder")
	var run func() error
	switch args[0] {
	case CommandSeed:
		run = bindSeed(ctx, fs, dataDir, env, log)
	case CommandDonate:
		run = bindDonate(ctx, fs, dataDir, env, log)
	default:
		fmt.Fprintf(stderr, "appkeeper member: unknown command %q\n", args[0])
		return 2
	}
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	secret := env(EnvSecret)
	if secret == "" {
		fmt.Fprintf(stderr, "appkeeper member %s: $%s is empty\n", args[0], EnvSecret)
		return 2
	}
	if err := run(); err != nil {
		fmt.Fprintf(stderr, "appkeeper member %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

func bindSeed(ctx context.Context, fs *flag.FlagSet, dataDir *string, env func(string) string, log *slog.Logger) func() error {
	host, _ := os.Hostname()
	name := fs.String("name", host, "the member's name, <instance>-<ordinal>")
	planDir := fs.String("plan", "/etc/appkeeper/seed", "the folder of the operator's plan")
	peers := fs.String("peers", "", "the domain under which every member's name resolves (its headless Service)")
	binlog := fs.String("binlog", "binlog", "the binary log's base name in the data folder")
	server := fs.String("server", "mariadbd", "the server program that records the copied position")
	return func() error {
		// The brief server closes the connection that stops it; the driver would log that.
		_ = mysql.SetLogger(stdlog.New(io.Discard, "", 0))
		if *peers == "" {
			return errors.New("--peers is required")
		}
		m := &Member{
			Name: *name, DataDir: *dataDir, BinlogBase: *binlog, Secret: []byte(env(EnvSecret)), Log: log, Retry: 10 * time.Second,
			DonorAddress: func(member string) string {
				return net.JoinHostPort(member+"."+*peers, strconv.Itoa(DonorPort))
			},
			Unpack: func(ctx context.Context, dir string) *exec.Cmd {
				return exec.CommandContext(ctx, "mbstream", "-x", "-C", dir)
			},
			Prepare: func(ctx context.Context, dir string) *exec.Cmd {
				return exec.CommandContext(ctx, "mariadb-backup", "--prepare", "--target-dir="+dir)
			},
			Position: Server{Command: []string{*server}, RootPassword: env(EnvRootPassword), Scratch: os.TempDir()}.Position,
			Plan:     func() (Plan, error) { return ReadPlan(*planDir, *name) },
		}
		return m.Seed(ctx)
	}
}

func bindDonate(ctx context.Context, fs *flag.FlagSet, dataDir *string, env func(string) string, log *slog.Logger) func() error {
	listen := fs.String("listen", ":"+strconv.Itoa(DonorPort), "the address to serve copies on")
	port := fs.Int("server-port", 3306, "the port of the member's server on the loopback")
	user := fs.String("user", "", "the account the copy connects to the server as; its password is $MYSQL_PWD")
	return func() error {
		if *user == "" {
			return errors.New("--user is required")
		}
		l, err := net.Listen("tcp", *listen)
		if err != nil {
			return err
		}
		log.Info("serving copies of the member's data", "address", l.Addr().String())
		d := &Donor{Secret: []byte(env(EnvSecret)), Log: log, Copy: func(ctx context.Context) *exec.Cmd {
			return exec.CommandContext(ctx, "mariadb-backup", "--backup", "--stream=mbstream", "--datadir="+*dataDir,
				"--host=127.0.0.1", "--port="+strconv.Itoa(*port), "--user="+*user, "--target-dir="+os.TempDir())
		}}
		return d.Serve(ctx, l)
	}
}
