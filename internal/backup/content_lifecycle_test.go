package backup

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// unlessNonEmpty: a folder that holds anything is a restarted site or a volume with data of its
// own, left alone with --unless-nonempty and refused without; a new volume's lost+found is not
// content.
func (env *contentEnv) unlessNonEmpty(t *testing.T) {
	ctx := context.Background()
	target, creds := env.s3.target("sites/blog/wp/nonempty"), env.s3.credentials()
	env.archive(t, archiveOptions{Target: target, Credentials: creds})

	site := tempDir(t)
	if err := os.WriteFile(filepath.Join(site, "index.php"), []byte("<?php"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := readTree(t, site)
	res, err := extract(ctx, extractOptions{Target: target, Credentials: creds, Dir: site, UnlessNonEmpty: true})
	if err != nil || res.Artifact != "" {
		t.Errorf("extract --unless-nonempty into a folder with a file = %+v, %v; want nothing done", res, err)
	}
	_, err = extract(ctx, extractOptions{Target: target, Credentials: creds, Dir: site})
	if err == nil || !strings.Contains(err.Error(), "is not empty (it holds index.php)") {
		t.Errorf("extract into a folder with a file = %v, want it refused", err)
	}
	requireSameTree(t, readTree(t, site), before)

	fresh := tempDir(t)
	if err := os.Mkdir(filepath.Join(fresh, "lost+found"), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := extract(ctx, extractOptions{Target: target, Credentials: creds, Dir: fresh, UnlessNonEmpty: true}); err != nil {
		t.Fatal(err)
	}
	got := readTree(t, fresh)
	if _, ok := got["lost+found"]; !ok {
		t.Error("lost+found was removed")
	}
	delete(got, "lost+found")
	requireSameTree(t, got, env.want)
}

// interrupted: an extraction killed before its archive was verified leaves a temporary folder,
// which the next one removes; one killed while it moved the verified entries into place is
// finished by the next, which then needs no backup at all.
func (env *contentEnv) interrupted(t *testing.T) {
	ctx := context.Background()
	target, creds := env.s3.target("sites/blog/wp/interrupted"), env.s3.credentials()
	env.archive(t, archiveOptions{Target: target, Credentials: creds})

	site := tempDir(t)
	partial := filepath.Join(site, extractPrefix+"-KILLED", "uploads")
	if err := os.MkdirAll(partial, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(partial, "half.jpg"), []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := extract(ctx, extractOptions{Target: target, Credentials: creds, Dir: site, UnlessNonEmpty: true}); err != nil {
		t.Fatal(err)
	}
	requireSameTree(t, readTree(t, site), env.want)
	env.interruptedWhileMoving(t, site)
}

// interruptedWhileMoving moves the entries of a restored site into a new folder, half in place,
// half still in the verified folder, as an extraction killed while it moved them leaves them.
func (env *contentEnv) interruptedWhileMoving(t *testing.T, site string) {
	ctx := context.Background()
	moving := tempDir(t)
	if err := os.Mkdir(filepath.Join(moving, extractedName), 0o700); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(site)
	if err != nil {
		t.Fatal(err)
	}
	for i, entry := range entries {
		to := filepath.Join(moving, entry.Name())
		if i%2 == 1 {
			to = filepath.Join(moving, extractedName, entry.Name())
		}
		renameEntry(t, filepath.Join(site, entry.Name()), to)
	}
	nowhere := Target{Volume: tempDir(t), Key: "no/backup/here"}
	// Something else wrote into the folder meanwhile: nothing of it is replaced.
	clash := filepath.Join(moving, entries[1].Name())
	if err := os.WriteFile(clash, []byte("not the backup's"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = extract(ctx, extractOptions{Target: nowhere, Dir: moving, UnlessNonEmpty: true})
	if err == nil || !strings.Contains(err.Error(), "gained an entry of that name") {
		t.Errorf("extract over an entry written meanwhile = %v", err)
	}
	if data, _ := os.ReadFile(clash); string(data) != "not the backup's" {
		t.Errorf("the entry written meanwhile was replaced")
	}
	if err := os.Remove(clash); err != nil {
		t.Fatal(err)
	}
	if _, err := extract(ctx, extractOptions{Target: nowhere, Dir: moving, UnlessNonEmpty: true}); err != nil {
		t.Fatal(err)
	}
	requireSameTree(t, readTree(t, moving), env.want)
}

// notContent: a volume's lost+found and what an extraction left are not archived.
func (env *contentEnv) notContent(t *testing.T) {
	site := makeSite(t)
	for _, name := range []string{"lost+found", extractPrefix + "-KILLED", extractedName} {
		if err := os.Mkdir(filepath.Join(site, name), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(site, name, "f"), []byte("f"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	target, creds := env.s3.target("sites/blog/wp/not-content"), env.s3.credentials()
	res := env.archive(t, archiveOptions{Target: target, Credentials: creds, Dir: site})
	if files, _ := siteCounts(); res.Files != files {
		t.Errorf("archived %d files, want %d", res.Files, files)
	}
	out := tempDir(t)
	if _, err := extract(context.Background(), extractOptions{Target: target, Credentials: creds, Dir: out}); err != nil {
		t.Fatal(err)
	}
	requireSameTree(t, readTree(t, out), env.want)
}

// prune deletes the content backups of the keys given, never the one just taken, and leaves the
// database backups at those keys to the dumps' own pruning.
func (env *contentEnv) prune(t *testing.T) {
	ctx := context.Background()
	creds := env.s3.credentials()
	for _, key := range []string{"prune/1", "prune/2", "prune/3"} {
		env.archive(t, archiveOptions{Target: env.s3.target(key), Credentials: creds})
	}
	store, err := openStorage(env.s3.target("prune/1"), creds)
	if err != nil {
		t.Fatal(err)
	}
	for _, object := range sqlObjects("prune/1")[:2] {
		if err := store.put(ctx, object, strings.NewReader("{}"), 2); err != nil {
			t.Fatal(err)
		}
	}
	res := env.archive(t, archiveOptions{Target: env.s3.target("prune/4"), Credentials: creds,
		Prune: []string{"prune/1", "prune/3", "prune/never-existed", "prune/4"}})
	if want := []string{"prune/1", "prune/3", "prune/never-existed"}; !slices.Equal(res.Pruned, want) {
		t.Errorf("pruned = %v, want %v (never the backup just taken)", res.Pruned, want)
	}
	requireBucketHolds(t, env.s3, "prune/", "prune/1.json", "prune/1.sql.gz",
		"prune/2.content.json", "prune/2.content.tar.gz", "prune/4.content.json", "prune/4.content.tar.gz")
}

// changing archives folders that change while they are read, as a live site's do: entries listed
// but gone when read are left out, and files rewritten or removed all the time do not fail the
// archive.
func (env *contentEnv) changing(t *testing.T) {
	ctx := context.Background()
	creds := env.s3.credentials()
	listing := changingListing{ReadDirFS: os.DirFS(env.site).(fs.ReadDirFS), ghosts: map[string][]fs.DirEntry{
		".":       {ghost{name: "vanished.txt"}, ghost{name: "vanished-folder", dir: true}},
		"uploads": {ghost{name: "gone.jpg"}},
	}}
	res := env.archive(t, archiveOptions{Target: env.s3.target("live/ghosts"), Credentials: creds, listing: listing})
	if files, size := siteCounts(); res.Files != files || res.Bytes != size {
		t.Errorf("archive result = %+v, want %d files of %d bytes", res, files, size)
	}
	out := tempDir(t)
	if _, err := extract(ctx, extractOptions{Target: env.s3.target("live/ghosts"), Credentials: creds, Dir: out}); err != nil {
		t.Fatal(err)
	}
	requireSameTree(t, readTree(t, out), env.want)

	live := makeSite(t)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { churn(live, stop) })
	for i := range 3 {
		res, err := archive(ctx, archiveOptions{Target: env.s3.target(fmt.Sprintf("live/churn/%d", i)), Credentials: creds, Dir: live})
		if err != nil {
			t.Errorf("archive of a changing folder = %v", err)
			continue
		}
		if _, err := extract(ctx, extractOptions{Target: env.s3.target(res.Key), Credentials: creds, Dir: tempDir(t)}); err != nil {
			t.Errorf("extract of a changing folder's archive = %v", err)
		}
	}
	close(stop)
	wg.Wait()
}

// churn creates, rewrites with another size and removes files in dir/cache until stop is closed.
func churn(dir string, stop <-chan struct{}) {
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		page := filepath.Join(dir, "cache", fmt.Sprintf("page-%d.html", i%50))
		_ = os.WriteFile(page, bytes.Repeat([]byte{'x'}, (i*7919)%(256<<10)), 0o644)
		_ = os.Remove(filepath.Join(dir, "cache", fmt.Sprintf("page-%d.html", (i+25)%50)))
		time.Sleep(time.Millisecond)
	}
}

// failure: a folder that fails to be read fails the archive after part of it was streamed, and
// the key is left without a content backup, although it held one before.
func (env *contentEnv) failure(t *testing.T) {
	ctx := context.Background()
	creds := env.s3.credentials()
	volume := tempDir(t)
	broken := changingListing{ReadDirFS: os.DirFS(env.site).(fs.ReadDirFS),
		ghosts: map[string][]fs.DirEntry{"uploads": {ghost{name: "zz", dir: true}}}, broken: "uploads/zz"}
	for _, target := range []Target{env.s3.target("fail/site"), {Volume: volume, Key: "fail/site"}} {
		env.archive(t, archiveOptions{Target: target, Credentials: creds})
		_, err := archive(ctx, archiveOptions{Target: target, Credentials: creds, Dir: env.site, listing: broken})
		if err == nil || !strings.Contains(err.Error(), "cannot read uploads/zz in "+env.site) {
			t.Errorf("archive of a folder that cannot be read = %v", err)
		}
	}
	requireNoObjects(t, env.s3, "fail/")
	requireNoFiles(t, volume)

	// Root reads every file; the Jobs run as the site's user.
	if os.Geteuid() != 0 {
		site := makeSite(t)
		if err := os.Chmod(filepath.Join(site, "themes/twentyfour/config.php"), 0); err != nil {
			t.Fatal(err)
		}
		_, err := archive(ctx, archiveOptions{Target: env.s3.target("fail/unreadable"), Credentials: creds, Dir: site})
		if err == nil || !strings.Contains(err.Error(), "config.php in "+site+": permission denied: the Job's user cannot read it") {
			t.Errorf("archive of a file the user cannot read = %v", err)
		}
	}

	missing := filepath.Join(tempDir(t), "missing")
	_, err := archive(ctx, archiveOptions{Target: env.s3.target("fail/missing"), Credentials: creds, Dir: missing})
	if err == nil || !strings.Contains(err.Error(), "cannot open --dir "+missing) {
		t.Errorf("archive of a missing folder = %v", err)
	}
	requireNoObjects(t, env.s3, "fail/")
}

// renameEntry moves an entry to another folder; one read-only folder is made writable for the
// move, which Linux asks of a folder moved to another parent.
func renameEntry(t *testing.T, from, to string) {
	t.Helper()
	info, err := os.Lstat(from)
	if err != nil {
		t.Fatal(err)
	}
	if info.IsDir() {
		if err := os.Chmod(from, 0o700); err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := os.Chmod(to, info.Mode().Perm()); err != nil {
				t.Fatal(err)
			}
		}()
	}
	if err := os.Rename(from, to); err != nil {
		t.Fatal(err)
	}
}
