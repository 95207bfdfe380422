// Command pack turns a root filesystem folder into a one-layer image tarball in the Docker archive
// format, which `ctr images import` and `docker load` read; internal/ociarchive does the work.
//
//	pack -rootfs DIR -name localhost/appkeeper/x:1 -o x.tar [-user 101:101] [-entrypoint JSON]
//	     [-cmd JSON] [-env K=V]... [-port 8080/tcp]... [-workdir DIR] [-stop-signal SIGQUIT]
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/appkeeper/appkeeper/internal/ociarchive"
)

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	var (
		rootfs     = flag.String("rootfs", "", "the root filesystem folder")
		name       = flag.String("name", "", "the image's name and tag")
		output     = flag.String("o", "", "the tarball to write")
		user       = flag.String("user", "", "the image's user, numeric uid[:gid]")
		entrypoint = flag.String("entrypoint", "", "the entrypoint, a JSON array")
		cmd        = flag.String("cmd", "", "the command, a JSON array")
		workdir    = flag.String("workdir", "", "the working directory")
		stopSignal = flag.String("stop-signal", "", "the signal that stops the container")
		env, ports listFlag
	)
	flag.Var(&env, "env", "an environment variable K=V (repeatable)")
	flag.Var(&ports, "port", "an exposed port such as 8080/tcp (repeatable)")
	flag.Parse()
	if *rootfs == "" || *name == "" || *output == "" {
		flag.Usage()
		os.Exit(2)
	}
	cfg := ociarchive.ImageConfig{User: *user, Env: env, WorkingDir: *workdir, StopSignal: *stopSignal}
	err := parseArray(*entrypoint, &cfg.Entrypoint)
	if err == nil {
		err = parseArray(*cmd, &cfg.Cmd)
	}
	for _, p := range ports {
		if !strings.Contains(p, "/") {
			p += "/tcp"
		}
		if cfg.ExposedPorts == nil {
			cfg.ExposedPorts = map[string]struct{}{}
		}
		cfg.ExposedPorts[p] = struct{}{}
	}
	if err == nil {
		err = ociarchive.Pack(*rootfs, *name, cfg, *output)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "pack:", err)
		os.Exit(1)
	}
}

func parseArray(s string, into *[]string) error {
	if s == "" {
		return nil
	}
	if err := json.Unmarshal([]byte(s), into); err != nil {
		return fmt.Errorf("%q is not a JSON array of strings: %w", s, err)
	}
	return nil
}
