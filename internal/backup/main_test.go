package backup

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	code := m.Run()
	template.cleanup()
	os.Exit(code)
}
