package backup

import (
	"fmt"
	"io"
	"os"
)

// install copies the running executable to dest, executable by anyone: the backup Jobs' init
// container runs it from the operator's image, which has no shell nor cp, into a volume that the
// MySQL server's image then runs it from.
func install(dest string) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("cannot find the running executable: %w", err)
	}
	src, err := os.Open(self)
	if err != nil {
		return fmt.Errorf("cannot read the running executable: %w", err)
	}
	defer src.Close()
	return writeAtomically(dest, 0o755, func(w io.Writer) error {
		_, err := io.Copy(w, src)
		return err
	})
}
