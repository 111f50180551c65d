package main

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/robothub/robothub/cli/cliapp"
	"github.com/robothub/robothub/cli/hubconn"
	"github.com/robothub/robothub/core/hub"
	"github.com/robothub/robothub/core/release"
)

// ReleaseKeyPasswordEnv is the password of an encrypted release signing key.
const ReleaseKeyPasswordEnv = "ROBOTHUB_RELEASE_KEY_PASSWORD"

func releaseCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "release",
		Usage: cliapp.RobothubUsageOf("release"),
		Subcommands: []*cli.Command{
			{
				Name:      "keygen",
				Usage:     "make a release key pair: DIR/release.pub (robot-daemon --release-key) and DIR/release.key (secret)",
				UsageText: "robothub release keygen --out DIR",
				Flags:     []cli.Flag{&cli.StringFlag{Name: "out", Required: true, Usage: "the `DIR` to write the key files into"}},
				Action: func(c *cli.Context) error {
					pub, secret, err := release.GenerateKey()
					if err != nil {
						return err
					}
					dir := c.String("out")
					if err := os.MkdirAll(dir, 0o700); err != nil {
						return cli.Exit(fmt.Sprintf("release keygen: %v", err), exitError)
					}
					if _, err := os.Stat(filepath.Join(dir, "release.key")); err == nil {
						return cli.Exit(fmt.Sprintf("release keygen: %s already holds a release.key: not replaced", dir), exitError)
					}
					if err := os.WriteFile(filepath.Join(dir, "release.key"), secret, 0o600); err != nil {
						return cli.Exit(fmt.Sprintf("release keygen: %v", err), exitError)
					}
					if err := os.WriteFile(filepath.Join(dir, "release.pub"), pub, 0o644); err != nil {
						return cli.Exit(fmt.Sprintf("release keygen: %v", err), exitError)
					}
					k, _ := release.ParseKey(pub)
					fmt.Fprintf(e.stdout, "release key %s: %s (public), %s (secret: keep it private)\n", k.ID(), filepath.Join(dir, "release.pub"), filepath.Join(dir, "release.key"))
					return nil
				},
			},
			{
				Name:  "assemble",
				Usage: "gzip, split, checksum and sign built programs into a release folder",
				UsageText: `robothub release assemble --version V --key FILE --out DIR PROGRAM...

Each PROGRAM is a built binary named <program>_<os>_<arch> (robot-daemon_linux_arm64). The release's
files go to DIR/releases/<V>/: release.json, the gzipped parts, SHA256SUMS and SHA256SUMS.minisig.
The key is a minisign secret key (robothub release keygen), encrypted ones with $` + ReleaseKeyPasswordEnv + `.`,
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "version", Required: true, Usage: "the release version, `MAJOR.MINOR.PATCH[-PRERELEASE]`"},
					&cli.StringFlag{Name: "key", Required: true, Usage: "the minisign secret key `FILE`"},
					&cli.StringFlag{Name: "out", Required: true, Usage: "the `DIR` to write releases/<version>/ into"},
					&cli.IntFlag{Name: "part-size", Value: release.DefaultPartBytes, Usage: "the largest part of a program, in bytes"},
				},
				Action: func(c *cli.Context) error { return releaseAssemble(c, e) },
			},
			{
				Name:  "publish",
				Usage: "commit an assembled release and the channel index to the release repository on the hub",
				UsageText: `robothub release publish --repo REPO --version V --dir DIR [--endpoint URL] [--token T]

REPO is owner/name (a model repo) or models/, datasets/, spaces/owner/name. The files of
DIR/releases/<V>/ and channels.json (naming V as its channel's newest) go in one commit; a version
already published is refused.`,
				Flags: append(hubconn.ConnectionFlags(),
					&cli.StringFlag{Name: "repo", Required: true, Usage: "the release repository"},
					&cli.StringFlag{Name: "version", Required: true, Usage: "the release version"},
					&cli.StringFlag{Name: "dir", Required: true, Usage: "the `DIR` release assemble wrote"},
				),
				Action: func(c *cli.Context) error {
					cl, err := hubconn.NewClient(c, e.getenv, e.stderr)
					if err != nil {
						return err
					}
					return hubconn.UserError(cl, releasePublish(c, e, cl))
				},
			},
		},
		OnUsageError: onUsageError,
	}
}

func releaseAssemble(c *cli.Context, e *env) error {
	v, err := release.ParseVersion(c.String("version"))
	if err != nil {
		return usagef("--version: %v", err)
	}
	text, err := os.ReadFile(c.String("key"))
	if err != nil {
		return usagef("--key: %v", err)
	}
	key, err := release.ParseSigningKey(text, e.getenv(ReleaseKeyPasswordEnv))
	if err != nil {
		return usagef("--key: %v", err)
	}
	if c.NArg() == 0 {
		return usagef("no programs: name the built binaries (<program>_<os>_<arch>)")
	}
	var bins []release.Binary
	for _, path := range c.Args().Slice() {
		program, goos, goarch, err := release.ParseBinaryName(filepath.Base(path))
		if err != nil {
			return usagef("%v", err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return cli.Exit(fmt.Sprintf("release assemble: %v", err), exitError)
		}
		bins = append(bins, release.Binary{Program: program, OS: goos, Arch: goarch, Data: data})
	}
	files, m, err := release.Assemble(v, bins, key, c.Int("part-size"), time.Now())
	if err != nil {
		return cli.Exit(fmt.Sprintf("release assemble: %v", err), exitError)
	}
	for _, f := range files {
		dst := filepath.Join(c.String("out"), filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return cli.Exit(fmt.Sprintf("release assemble: %v", err), exitError)
		}
		if err := os.WriteFile(dst, f.Content, 0o644); err != nil {
			return cli.Exit(fmt.Sprintf("release assemble: %v", err), exitError)
		}
	}
	fmt.Fprintf(e.stdout, "release %s (%s): %d programs, %d files in %s, signed by key %s\n", v, m.Channel, len(m.Files), len(files),
		filepath.Join(c.String("out"), release.Dir(v)), key.Public().ID())
	return nil
}

func releasePublish(c *cli.Context, e *env, cl *hub.Client) error {
	repo, err := release.ParseRepo(c.String("repo"))
	if err != nil {
		return usagef("--repo: %v", err)
	}
	v, err := release.ParseVersion(c.String("version"))
	if err != nil {
		return usagef("--version: %v", err)
	}
	dir := filepath.Join(c.String("dir"), filepath.FromSlash(release.Dir(v)))
	entries, err := os.ReadDir(dir)
	if err != nil {
		return usagef("--dir: %v (run robothub release assemble first)", err)
	}
	var files []release.RepoFile
	names := []string{}
	for _, en := range entries {
		if en.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, en.Name()))
		if err != nil {
			return err
		}
		files = append(files, release.RepoFile{Path: release.Dir(v) + "/" + en.Name(), Content: data})
		names = append(names, en.Name())
	}
	if !slices.Contains(names, "SHA256SUMS.minisig") || !slices.Contains(names, "release.json") {
		return usagef("--dir: %s has no release.json or SHA256SUMS.minisig: not an assembled release", dir)
	}
	info, err := release.Publish(c.Context, cl, repo, v, files)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "published robot-daemon %s to %s (%s channel): commit %s, %d files\n", v, repo, v.Channel(),
		cmp.Or(info.OID, "?"), len(files)+1)
	return nil
}
