package kubectlplugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// waitFlags are --wait and --timeout of the commands that start something that takes a while.
type waitFlags struct {
	wait    bool
	timeout time.Duration
}

func (f *waitFlags) add(cmd *cobra.Command, what string, timeout time.Duration) {
	cmd.Flags().BoolVar(&f.wait, "wait", true, "follow "+what+", printing each change; --wait=false returns at once")
	cmd.Flags().DurationVar(&f.timeout, "timeout", timeout, "how long --wait follows before giving up (what it follows goes on)")
}

// step reads one state of the followed object: the line to print, whether it is over, and an
// error when it ended in failure.
type step func(client.Object) (line string, done bool, err error)

// errGone is returned when the followed object is deleted under the plugin.
var errGone = errors.New("it was deleted")

// follow watches one object and prints a line each time what step reads in it changes, until step
// says it is done or the timeout passes. A watch the API server ends is opened again.
func follow(ctx context.Context, c client.WithWatch, list client.ObjectList, key client.ObjectKey, timeout time.Duration, w io.Writer, read step) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	last := ""
	for {
		watcher, err := c.Watch(ctx, list, client.InNamespace(key.Namespace), client.MatchingFields{"metadata.name": key.Name})
		if err != nil {
			if ctx.Err() != nil {
				return timedOut(timeout, last)
			}
			return apiError(err, "watch "+key.Name)
		}
		done, err := drain(watcher, read, &last, w)
		watcher.Stop()
		if done || err != nil {
			return err
		}
		if ctx.Err() != nil {
			return timedOut(timeout, last)
		}
	}
}

// drain reads one watch until it ends or the followed object is done.
func drain(watcher watch.Interface, read step, last *string, w io.Writer) (bool, error) {
	for event := range watcher.ResultChan() {
		switch event.Type {
		case watch.Deleted:
			return true, errGone
		case watch.Error:
			return false, nil
		case watch.Bookmark:
			continue
		}
		obj, ok := event.Object.(client.Object)
		if !ok {
			continue
		}
		line, done, err := read(obj)
		if line != *last {
			fmt.Fprintln(w, line)
			*last = line
		}
		if done || err != nil {
			return true, err
		}
	}
	return false, nil
}

func timedOut(timeout time.Duration, last string) error {
	if last == "" {
		return fmt.Errorf("gave up after %s without seeing it", timeout)
	}
	return fmt.Errorf("gave up after %s, at the state printed last; it goes on without the plugin", timeout)
}
