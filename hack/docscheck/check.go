package main

import (
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/net/html"
)

// repoURL is where the book links to the repository's own files: such links must name a file
// or folder that exists on the main branch, which is the checkout being built.
const repoURL = "https://github.com/appkeeper/appkeeper/"

// page is what one built HTML file offers and asks for.
type page struct {
	ids   map[string]bool
	links []string
}

// check reads every HTML page of the site and returns one line per broken link, sorted.
func check(site, repo string) ([]string, error) {
	pages := map[string]*page{}
	err := filepath.WalkDir(site, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".html") {
			return err
		}
		rel, _ := filepath.Rel(site, p)
		pg, err := parsePage(p)
		if err != nil {
			return err
		}
		pages[filepath.ToSlash(rel)] = pg
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(pages) == 0 {
		return nil, fmt.Errorf("no HTML pages under %s: build the book first", site)
	}
	var broken []string
	for name, pg := range pages {
		for _, link := range pg.links {
			if problem := checkLink(site, repo, name, link, pages); problem != "" {
				broken = append(broken, fmt.Sprintf("%s: %s: %s", name, link, problem))
			}
		}
	}
	sort.Strings(broken)
	return broken, nil
}

func parsePage(file string) (*page, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	doc, err := html.Parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	pg := &page{ids: map[string]bool{}}
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			for _, a := range n.Attr {
				switch {
				case a.Key == "id" || (a.Key == "name" && n.Data == "a"):
					pg.ids[a.Val] = true
				case a.Key == "href" && n.Data == "a":
					pg.links = append(pg.links, a.Val)
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return pg, nil
}

// checkLink says what is wrong with one link of the page named from, or "" when nothing is.
func checkLink(site, repo, from, link string, pages map[string]*page) string {
	if rest, ok := strings.CutPrefix(link, repoURL); ok {
		return checkRepoLink(repo, rest)
	}
	u, err := url.Parse(link)
	if err != nil {
		return err.Error()
	}
	if u.Scheme != "" || u.Host != "" {
		return ""
	}
	target := from
	if u.Path != "" {
		target = path.Clean(path.Join(path.Dir(from), u.Path))
		if strings.HasSuffix(u.Path, "/") || isDir(filepath.Join(site, target)) {
			target = path.Join(target, "index.html")
		}
	}
	pg, ok := pages[target]
	if !ok {
		if _, err := os.Stat(filepath.Join(site, target)); err == nil {
			return ""
		}
		return "no such page"
	}
	if u.Fragment != "" && !pg.ids[u.Fragment] {
		return fmt.Sprintf("no anchor %q in %s", u.Fragment, target)
	}
	return ""
}

// checkRepoLink checks a link such as blob/main/config/argocd/health.lua against the checkout.
func checkRepoLink(repo, rest string) string {
	if rest == "" {
		return ""
	}
	parts := strings.SplitN(strings.SplitN(rest, "#", 2)[0], "/", 3)
	if len(parts) < 2 || (parts[0] != "blob" && parts[0] != "tree") || parts[1] != "main" {
		return "links into the repository go to blob/main/<path> or tree/main/<path>"
	}
	if len(parts) == 2 {
		return ""
	}
	if _, err := os.Stat(filepath.Join(repo, filepath.FromSlash(parts[2]))); err != nil {
		return "no such file in the repository"
	}
	return ""
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
