package admission

import "strings"

// ImageNameEdge is an image whose path, the name less its registry as the kubelet reads it, is
// exactly at the length limit of image paths, or one character above it.
type ImageNameEdge struct {
	Shape   string
	Image   string
	TooLong bool
}

// MaxImagePathLength is the longest path, the name less its registry, that an image may have.
const MaxImagePathLength = 255

// ImageNameEdges are the edges of every way of writing an image's name. The kubelet reads a name
// without a registry as one on Docker Hub, where a path of one component is library/<name>.
var ImageNameEdges = func() []ImageNameEdge {
	shapes := []struct {
		shape, registry, path string
		added                 int
	}{
		{"with its registry", "registry.local:5000/", "team/", 0},
		{"of one component, with its registry", "localhost/", "", 0},
		{"of one component, on Docker Hub", "", "", len("library/")},
		{"of two components, on Docker Hub", "", "team/", 0},
		{"of one component, on docker.io", "docker.io/", "", len("library/")},
	}
	edges := make([]ImageNameEdge, 0, 2*len(shapes))
	for _, s := range shapes {
		for _, length := range []int{MaxImagePathLength, MaxImagePathLength + 1} {
			name := s.registry + s.path + strings.Repeat("a", length-len(s.path)-s.added)
			edges = append(edges, ImageNameEdge{s.shape, name + ":1.0@sha256:" + strings.Repeat("0a", 32), length > MaxImagePathLength})
		}
	}
	return edges
}()

// imageNameTooLong is the part of an image rule's message that gives the limit.
const imageNameTooLong = "the name in lowercase and its path at most 255 characters"

// imageNameEdgeSpecs are the rows of InvalidSpecs that refuse a name one character too long, for
// each shape on a WebServer, and with its registry on every field an image rule guards.
func imageNameEdgeSpecs() []InvalidSpec {
	var specs []InvalidSpec
	for _, e := range ImageNameEdges {
		if !e.TooLong {
			continue
		}
		specs = append(specs, InvalidSpec{"image name " + e.Shape + " one character too long", "WebServer",
			map[string]any{"image": e.Image}, "spec.image: Invalid value…spec.image must be an image reference…" + imageNameTooLong})
		if e.Shape != ImageNameEdges[0].Shape {
			continue
		}
		for _, kind := range []string{"Memcached", "MySQL", "WordPress"} {
			specs = append(specs, InvalidSpec{strings.ToLower(kind) + " image name one character too long", kind, map[string]any{"image": e.Image},
				"spec.image: Invalid value…spec.image must be an image reference…" + imageNameTooLong})
		}
		specs = append(specs,
			InvalidSpec{"exporter image name one character too long", "MySQL", monitoring(e.Image),
				"spec.monitoring.image: Invalid value…spec.monitoring.image must be an image reference…" + imageNameTooLong},
			InvalidSpec{"wordpress inline mysql image name one character too long", "WordPress",
				map[string]any{"database": map[string]any{"mysql": map[string]any{"image": e.Image}}}, "spec.database.mysql.image: Invalid value…" + imageNameTooLong})
	}
	return specs
}

// imageNameEdgeUpdates are the rows of ValidUpdates that create and update objects with names at
// the limit: every shape on a WebServer, and with its registry on every field an image rule guards.
func imageNameEdgeUpdates() []Update {
	var atLimit []ImageNameEdge
	for _, e := range ImageNameEdges {
		if !e.TooLong {
			atLimit = append(atLimit, e)
		}
	}
	updates := make([]Update, 0, len(atLimit)+3)
	for i, e := range atLimit {
		next := atLimit[(i+1)%len(atLimit)]
		updates = append(updates, Update{"image name " + e.Shape + " at the limit, then " + next.Shape, "WebServer",
			map[string]any{"image": e.Image}, map[string]any{"image": next.Image}, ""})
	}
	image := atLimit[0].Image
	return append(updates,
		Update{"memcached image name at the limit", "Memcached", map[string]any{}, map[string]any{"image": image}, ""},
		Update{"mysql and exporter image names at the limit", "MySQL", map[string]any{"image": image}, monitoring(image), ""},
		Update{"wordpress and its own mysql image names at the limit", "WordPress", map[string]any{"image": image},
			inlineMySQL(map[string]any{"image": image}), ""})
}
