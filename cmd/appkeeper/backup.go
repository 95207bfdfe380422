package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/appkeeper/appkeeper/internal/backup"
	"github.com/appkeeper/appkeeper/internal/seed"
)

// runBackup runs `appkeeper backup …`, the data path of the backup Jobs. SIGTERM, which the
// kubelet sends when the Job's pod is deleted, cancels the work so that a partial upload is
// aborted and temporary files are removed before the process exits.
func runBackup(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return backup.Main(ctx, args, os.Getenv, os.Stdout, os.Stderr)
}

// runMember runs `appkeeper member …`, beside a cluster member's server: the donor that serves
// copies of its data, and the init container that gives a member a copy.
func runMember(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return seed.Main(ctx, args, os.Getenv, os.Stderr)
}
