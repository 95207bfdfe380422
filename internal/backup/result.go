package backup

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// terminationLog is where Kubernetes reads a container's termination message by default.
const terminationLog = "/dev/termination-log"

// maxTerminationMessage is the most of a termination message the kubelet keeps; a longer one is
// cut, which would leave JSON that does not parse.
const maxTerminationMessage = 4096

// defaultResultFile is the termination log when this runs in a container that has one, else
// nothing.
func defaultResultFile() string {
	f, err := os.OpenFile(terminationLog, os.O_WRONLY, 0)
	if err != nil {
		return ""
	}
	_ = f.Close()
	return terminationLog
}

// writeResult prints res as one JSON line on stdout, and writes it to file, if any, cut to fit a
// termination message.
func writeResult(res Result, stdout io.Writer, file string) error {
	line, err := json.Marshal(res)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(stdout, "%s\n", line); err != nil {
		return err
	}
	if file == "" {
		return nil
	}
	if err := os.WriteFile(file, fitResult(res), 0o644); err != nil {
		return fmt.Errorf("cannot write the result to %s: %w", file, err)
	}
	return nil
}

// fitResult is res as JSON of at most maxTerminationMessage bytes: a long error is cut, then
// the lists lose their last entries (stdout keeps them whole).
func fitResult(res Result) []byte {
	const maxError = 1500
	if len(res.Error) > maxError {
		res.Error = res.Error[:maxError] + "…"
	}
	for {
		data, err := json.Marshal(res)
		if err != nil || len(data) <= maxTerminationMessage {
			return data
		}
		switch {
		case len(res.Pruned) > 0:
			res.Pruned = res.Pruned[:len(res.Pruned)-1]
		case len(res.Mismatches) > 0:
			res.Mismatches = res.Mismatches[:len(res.Mismatches)-1]
		default:
			res.Error = res.Error[:len(res.Error)/2]
		}
	}
}
