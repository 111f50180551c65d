package release

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/hub"
)

// Publish commits release v's files (Assemble's) and the channel index that names it to the
// release repository through the hub's commit API, creating the repository when it does not
// exist. A version already published is refused: a release is never replaced. The commit names
// the head it read as its parent, so two publishers at once cannot lose each other's channel.
func Publish(ctx context.Context, c *hub.Client, repo Repo, v Version, files []RepoFile) (*hub.CommitInfo, error) {
	var parent string
	var ix *Index
	rev, err := c.Revision(ctx, repo.Type, repo.ID, "main")
	switch {
	case errors.Is(err, fault.ErrNotFound):
		req := hub.CreateRepoRequest{Type: repo.Type, ID: repo.ID}
		if repo.Type == "space" {
			req.SDK = "static"
		}
		if _, err := c.CreateRepo(ctx, req); err != nil {
			return nil, fmt.Errorf("creating the release repository %s: %w", repo, err)
		}
	case err != nil:
		return nil, fmt.Errorf("the release repository %s: %w", repo, err)
	default:
		parent = rev.SHA
		for _, f := range rev.Files() {
			if strings.HasPrefix(f, Dir(v)+"/") {
				return nil, fault.Refusedf("release %s is already in %s (%s): a release is never replaced; publish a new version", v, repo, f)
			}
			if f == "channels.json" {
				data, err := c.Download(ctx, repo.Type, repo.ID, rev.SHA, f)
				if err != nil {
					return nil, err
				}
				if ix, err = ParseIndex(data); err != nil {
					return nil, fmt.Errorf("%s: %w", repo, err)
				}
			}
		}
	}
	req := hub.CommitRequest{RepoType: repo.Type, RepoID: repo.ID, Summary: "robot-daemon " + v.String(),
		Description: fmt.Sprintf("Release %s of robot-daemon (%s channel), signed.", v, v.Channel()), ParentCommit: parent}
	for _, f := range files {
		if !strings.HasPrefix(f.Path, Dir(v)+"/") {
			return nil, fault.Invalidf("%s is not a file of release %s (%s/...)", f.Path, v, Dir(v))
		}
		req.Files = append(req.Files, hub.CommitFile{Path: f.Path, Content: f.Content})
	}
	req.Files = append(req.Files, hub.CommitFile{Path: "channels.json", Content: ix.With(v).Bytes()})
	return c.Commit(ctx, req)
}
