package mysql

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/appkeeper/appkeeper/internal/testutil"
)

// TestProbesAgainstARealServer runs the exact probe commands of the mysqld container against a
// MariaDB server from the distribution's packages (the same client protocol and tools): the local
// cluster simulates pods, so this is where the probes meet a real server.
func TestProbesAgainstARealServer(t *testing.T) {
	server, err := exec.LookPath("mariadbd")
	if err != nil {
		if os.Getenv("APPKEEPER_REQUIRE_MARIADB") != "" {
			t.Fatal("mariadbd is not installed: run `make test-deps`")
		}
		t.Skip("mariadbd is not installed; `make test` installs it")
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	socket := filepath.Join(dir, "mysqld.sock")
	install := exec.Command("mariadb-install-db", "--no-defaults", "--user="+currentUser(), "--datadir="+data,
		"--auth-root-authentication-method=normal", "--skip-test-db")
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("mariadb-install-db: %v\n%s", err, out)
	}
	port := testutil.FreePort(t)
	mysqld := exec.Command(server, "--no-defaults", "--user="+currentUser(), "--datadir="+data, "--socket="+socket,
		"--bind-address=127.0.0.1", fmt.Sprintf("--port=%d", port), "--skip-name-resolve")
	logFile, err := os.Create(filepath.Join(dir, "mysqld.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	mysqld.Stdout, mysqld.Stderr = logFile, logFile
	if err := mysqld.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			_ = mysqld.Process.Kill()
			_ = mysqld.Wait()
		}
	}
	t.Cleanup(stop)

	run := func(cmd []string, env ...string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c := exec.CommandContext(ctx, cmd[0], cmd[1:]...)
		c.Env = append([]string{"PATH=" + os.Getenv("PATH"), fmt.Sprintf("MYSQL_TCP_PORT=%d", port)}, env...)
		out, err := c.CombinedOutput()
		if err != nil {
			return fmt.Errorf("%w: %s", err, out)
		}
		return nil
	}
	var notLive error
	if wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		notLive = run(LivenessCommand)
		return notLive == nil, nil
	}) != nil {
		t.Fatalf("the server did not start: %v", notLive)
	}
	// As the image's entrypoint does at first start: root gets the password from the Secret and
	// may connect over TCP.
	setup := exec.Command("mysql", "--no-defaults", "-S", socket, "-u", "root", "-e",
		"CREATE USER IF NOT EXISTS 'root'@'127.0.0.1'; ALTER USER 'root'@'127.0.0.1' IDENTIFIED BY 's3cret';"+
			"GRANT ALL ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION; ALTER USER 'root'@'localhost' IDENTIFIED BY 's3cret';")
	if out, err := setup.CombinedOutput(); err != nil {
		t.Fatalf("set the root password: %v\n%s", err, out)
	}

	if err := run(ReadinessCommand, "MYSQL_ROOT_PASSWORD=s3cret"); err != nil {
		t.Errorf("readiness with the right password: %v", err)
	}
	if err := run(ReadinessCommand, "MYSQL_ROOT_PASSWORD=wrong"); err == nil {
		t.Error("readiness passes with a wrong password: it does not test that the server authenticates")
	}
	if err := run(LivenessCommand); err != nil {
		t.Errorf("liveness of a running server that refuses the login: %v", err)
	}
	stop()
	if err := run(ReadinessCommand, "MYSQL_ROOT_PASSWORD=s3cret"); err == nil {
		t.Error("readiness passes with the server stopped")
	}
	if err := run(LivenessCommand); err == nil {
		t.Error("liveness passes with the server stopped")
	}
}

func currentUser() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "root"
}
