package main

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestCheckFindsEveryKindOfBrokenLink(t *testing.T) {
	site, repo := t.TempDir(), t.TempDir()
	write := func(dir, name, content string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(repo, "config/argocd/health.lua", "return {}")
	write(site, "index.html", `<h2 id="install">Install</h2>
<a href="#install">ok</a> <a href="#nowhere">bad anchor</a>
<a href="kinds/mysql.html#backups">ok</a> <a href="kinds/mysql.html#restore">bad anchor elsewhere</a>
<a href="kinds/redis.html">no page</a> <a href="https://kubernetes.io/#x">outside</a>
<a href="https://github.com/appkeeper/appkeeper/blob/main/config/argocd/health.lua">ok</a>
<a href="https://github.com/appkeeper/appkeeper/blob/main/config/argocd/gone.lua">no file</a>`)
	write(site, "kinds/mysql.html", `<h2 id="backups">Backups</h2><a href="../index.html#install">ok</a>`)

	broken, err := check(site, repo)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`index.html: #nowhere: no anchor "nowhere" in index.html`,
		`index.html: https://github.com/appkeeper/appkeeper/blob/main/config/argocd/gone.lua: no such file in the repository`,
		`index.html: kinds/mysql.html#restore: no anchor "restore" in kinds/mysql.html`,
		`index.html: kinds/redis.html: no such page`,
	}
	if !reflect.DeepEqual(broken, want) {
		t.Errorf("broken links:\n%q\nwant\n%q", broken, want)
	}
}

func TestCheckRefusesAnEmptySite(t *testing.T) {
	if _, err := check(t.TempDir(), "."); err == nil {
		t.Error("an empty site passed the check")
	}
}
