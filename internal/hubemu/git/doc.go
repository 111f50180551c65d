// Package git keeps the local hub's spaces as bare git repositories on disk: it makes and removes
// them, reads refs, commits, trees and blobs with go-git, writes the commits of the hub's commit
// API with git fast-import, and serves git's smart HTTP protocol through git http-backend.
//
// It implements spaces.Git. git itself is still needed for three things go-git does not do as
// git does: git init (a repository git http-backend and receive.fsckObjects accept unchanged),
// git fast-import (a commit of many files written as one pack), and git http-backend (go-git has
// no server side of the smart HTTP protocol that checks pushed objects as receive.fsckObjects does).
package git
