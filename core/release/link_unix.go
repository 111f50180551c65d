//go:build !windows

package release

import "github.com/google/renameio/v2"

// replaceLink points name at target by renaming a new link over it: a reader sees the old link
// or the new one, never none.
func replaceLink(target, name string) error { return renameio.Symlink(target, name) }
