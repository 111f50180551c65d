package spaces

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// CheckRepoPath checks a path in the repository and returns it without a leading "/" or "./". It is
// the check for paths that are read or deleted; a path a commit adds must also pass CheckNewPath.
func CheckRepoPath(p string) (string, error) {
	p = strings.TrimPrefix(strings.TrimPrefix(p, "/"), "./")
	switch {
	case p == "":
		return "", errors.New("empty")
	case len(p) > 4096:
		return "", fmt.Errorf("longer than 4096 bytes")
	case strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return "", fmt.Errorf("%q has a control character", p)
	}
	for _, seg := range strings.Split(p, "/") {
		switch {
		case seg == "":
			return "", fmt.Errorf("%q has an empty segment", p)
		case seg == "." || seg == "..":
			return "", fmt.Errorf("%q has a %q segment", p, seg)
		case strings.EqualFold(strings.TrimRight(seg, ". "), ".git"):
			return "", fmt.Errorf("%q is inside .git, which a repository cannot hold", p)
		}
	}
	return p, nil
}

// CheckNewPath checks a path a commit adds: CheckRepoPath's rules, and the names git fsck flags
// because a checkout on macOS (HFS+) or Windows (NTFS) would read them as .git or .gitmodules, which
// would let a space's files configure, or run programs in, the git of whoever clones it. The rules
// follow git's verify_path (read-cache.c), is_hfs_dotgit (utf8.c) and is_ntfs_dotgit (path.c),
// with protect_hfs and protect_ntfs both on as fsck has them, and go a little further where the
// issue found a client that does:
//   - a backslash anywhere (Windows clients read it as a folder separator, so "a\.git\config"
//     is .git/config there);
//   - a segment that is .git or .gitmodules once the code points HFS+ ignores are taken out
//     (".git\u200c", "\ufeff.gitmodules"); wider than git, every other Unicode format character and
//     white space is taken out too ("\u00a0.git");
//   - a segment that NTFS reads as .git or .gitmodules: trailing spaces and dots (".git. "), an
//     alternate data stream (".git::$INDEX_ALLOCATION"), the 8.3 short names git~1, gitmod~1..4 and
//     the fall-back gi7eba~N;
//   - .gitmodules itself: a space has no submodules (the commit API writes files only), and a
//     .gitmodules file is what the submodule attacks git fsck looks for start from.
//
// go-git has these rules (internal/pathutil) but cannot be imported for them: its only public way
// in, object.Tree.FindEntry, checks .git without .gitmodules or backslashes.
func CheckNewPath(p string) (string, error) {
	p, err := CheckRepoPath(p)
	if err != nil {
		return "", err
	}
	if strings.Contains(p, `\`) {
		return "", fmt.Errorf("%q has a backslash, which Windows clients read as a folder separator", p)
	}
	for _, seg := range strings.Split(p, "/") {
		for _, name := range []string{"git", "gitmodules"} {
			if seg == "."+name || hfsDot(seg, name) || ntfsDot(seg, name) {
				return "", fmt.Errorf("%q: git reads %q as .%s (git fsck refuses it), which a space cannot hold", p, seg, name)
			}
		}
	}
	return p, nil
}

// hfsDot says whether seg is "."+name (ASCII, any case) once the code points HFS+ ignores, and any
// other format character or white space, are taken out.
func hfsDot(seg, name string) bool {
	if !utf8.ValidString(seg) {
		return false // git: malformed UTF-8 cannot be .git on HFS+
	}
	kept := strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Cf, r) || unicode.IsSpace(r) {
			return -1
		}
		return r
	}, seg)
	return strings.EqualFold(kept, "."+name) && isASCII(kept)
}

// ntfsDot says whether NTFS reads seg as "."+name: that name or its short name, followed by nothing
// but spaces and dots, up to the end or a ':' (an alternate data stream). It is git's
// is_ntfs_dot_generic (and is_ntfs_dotgit for git, whose only short name git checks is git~1).
func ntfsDot(seg, name string) bool {
	if i := strings.IndexByte(seg, ':'); i >= 0 {
		seg = seg[:i]
	}
	seg = strings.ToLower(strings.TrimRight(seg, " ."))
	if seg == "."+name {
		return true
	}
	if name == "git" {
		return seg == "git~1"
	}
	// A regular short name: the first six characters, "~", and 1 to 4.
	if len(seg) == 8 && seg[:6] == name[:6] && seg[6] == '~' && seg[7] >= '1' && seg[7] <= '4' {
		return true
	}
	// The fall-back short name NTFS makes from a hash: up to six characters of the prefix git
	// computed for the name (gi7eba for .gitmodules), "~", a digit 1-9, then digits, 8 in all.
	prefix := map[string]string{"gitmodules": "gi7eba"}[name]
	if prefix == "" || len(seg) != 8 {
		return false
	}
	tilde := strings.IndexByte(seg, '~')
	if tilde < 0 || tilde > 6 || seg[:tilde] != prefix[:tilde] || seg[tilde+1] < '1' || seg[tilde+1] > '9' {
		return false
	}
	return strings.Trim(seg[tilde+2:], "0123456789") == ""
}

func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
