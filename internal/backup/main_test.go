package backup

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	code := m.Run()
	template.Remove()
	os.Exit(code)
}
