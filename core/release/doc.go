// Package release is how the robot daemon updates itself: what a release is (a version, a channel,
// its programs per OS and CPU, their checksums and the signature over them), how a robot fetches and
// checks one before a byte of it is installed, and the swap's record on the robot (the current and
// previous release, the pending update, its rollback).
//
// A release lives in a hub repository (files through the hub's commit API), laid out as:
//
//	channels.json                             {"v":1,"channels":{"stable":"1.2.0","pre-release":"1.3.0-rc.1"}}
//	releases/<version>/release.json           the manifest: version, channel, programs (size, sha256, parts)
//	releases/<version>/<program>_<os>_<arch>.gz[.NNN]  each program gzipped, split in parts under the
//	                                          hub's inline file limit
//	releases/<version>/SHA256SUMS             sha256sum(1) lines of release.json and every part
//	releases/<version>/SHA256SUMS.minisig     the minisign (Ed25519) signature of SHA256SUMS, whose
//	                                          trusted comment names the version
//
// The chain a robot checks: the signature of SHA256SUMS with the release key (compiled into the
// daemon, or --release-key), its trusted comment naming the version asked for, release.json's and
// each part's checksum, the manifest's version, the program's size and checksum once decompressed,
// and its ELF header's CPU. channels.json is advisory: a hub that lies in it can only name another
// signed release, and a downgrade is refused unless asked for.
//
// The repository is a model repository on the public hub: a model repo holds versioned files of any
// kind with no runtime (a Space would build and run one) and no dataset viewer, and its files are
// downloaded from /<repo>/resolve/<commit>/<file>. The local hub stores only spaces through its
// commit API, so there (robothub dev, the tests) the release repository is a space; Repo names the
// type either way.
package release
