package httpapi

import (
	"net/http"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
)

// FollowedJob is a job as its log's websocket follows it (JobLogSocket): the apps manager's and
// the self-update's jobs alike.
type FollowedJob struct {
	// Command is what the job does ("install", "update", ...), in each status message.
	Command string
	// Follow answers the log lines from index from on, the job's status now, whether that status
	// is final, and a channel closed at the job's next change.
	Follow func(from int) (lines []string, status string, finished bool, changed <-chan struct{})
}

// jobLogMessage is the anchor's job update on its websocket, after each batch of log lines.
type jobLogMessage struct {
	Command string   `json:"command"`
	Status  string   `json:"status"`
	Logs    []string `json:"logs"`
}

// JobLogSocket streams a job on r's websocket as the anchor's job sockets do: each new log line as
// a text message, then {command, status, logs} with those lines, until the job ends (the socket
// closes normally, "job <status>"), the client leaves, or done closes (the socket closes "going
// away" with goingAway as its reason). find names the job once the socket is open; when it cannot,
// the client gets {"error": "Job ID not found"} and the socket closes. Browsers of other origins
// are refused by the websocket library's origin check.
func JobLogSocket(w http.ResponseWriter, r *http.Request, find func() (FollowedJob, error), done <-chan struct{}, goingAway string) {
	conn, err := websocket.Accept(w, r, nil)
	if err != nil {
		return // Accept answered the request
	}
	defer conn.CloseNow()
	ctx := conn.CloseRead(r.Context())
	job, err := find()
	if err != nil {
		_ = wsjson.Write(ctx, conn, map[string]string{"error": "Job ID not found"})
		_ = conn.Close(websocket.StatusNormalClosure, "job not found")
		return
	}
	next := 0
	for {
		lines, status, finished, changed := job.Follow(next)
		next += len(lines)
		for _, line := range lines {
			if err := conn.Write(ctx, websocket.MessageText, []byte(line)); err != nil {
				return
			}
		}
		if len(lines) > 0 || finished {
			if err := wsjson.Write(ctx, conn, jobLogMessage{Command: job.Command, Status: status, Logs: append([]string{}, lines...)}); err != nil {
				return
			}
		}
		if finished {
			_ = conn.Close(websocket.StatusNormalClosure, "job "+status)
			return
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return
		case <-done:
			_ = conn.Close(websocket.StatusGoingAway, goingAway)
			return
		}
	}
}
