// Package kubectlplugin is `kubectl appkeeper`: the health of appkeeper's instances, the tree of
// their children, backups, restores and generated passwords, from a user's kubeconfig.
package kubectlplugin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// Exit codes: 0 done, 1 the command failed (an API error, a backup or restore that failed), 2 the
// command line is wrong.
const (
	exitFailed = 1
	exitUsage  = 2
)

// usageError is a mistake on the command line, as opposed to a failure of the work asked for.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// Run runs the plugin with the process's streams and returns its exit code.
func Run(args []string) int {
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	cmd := NewCommand(streams)
	cmd.SetArgs(args)
	// Ctrl-C ends a --wait; what it follows goes on in the cluster.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := cmd.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	fmt.Fprintln(streams.ErrOut, "error:", err)
	var usage usageError
	if errors.As(err, &usage) {
		return exitUsage
	}
	return exitFailed
}

// NewCommand is the root command with every subcommand.
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	env := &environment{
		configFlags: genericclioptions.NewConfigFlags(true),
		streams:     streams,
	}
	cmd := &cobra.Command{
		Use: "appkeeper",
		// kubectl runs the plugin as `kubectl appkeeper`: usage lines say so.
		Annotations: map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl appkeeper"},
		Short:       "Health, children, backups, restores, passwords, switchovers and promotions of appkeeper's applications",
		Long: `kubectl appkeeper reads and acts on appkeeper's applications (WebServer, Memcached, PodSet,
MySQL, WordPress) with the kubeconfig, context and namespace kubectl would use.

Exit status: 0 when done, 1 when the work failed (an API error, a failed backup or restore),
2 when the command line is wrong.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	cmd.CompletionOptions.DisableDefaultCmd = true
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err.Error()} })
	env.configFlags.AddFlags(cmd.PersistentFlags())
	cmd.AddCommand(
		newStatusCommand(env),
		newTreeCommand(env),
		newBackupCommand(env),
		newRestoreCommand(env),
		newPasswordCommand(env),
		newSwitchoverCommand(env),
		newPromoteCommand(env),
	)
	return cmd
}

// exactArgs is cobra.ExactArgs reporting a usage error.
func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usagef("%s takes %d argument(s), got %d: usage: %s", cmd.Name(), n, len(args), cmd.UseLine())
		}
		return nil
	}
}
