package apps

import "github.com/robothub/robothub/core/apps/origin"

// installTempPrefix names the temporary directory of an install job.
const installTempPrefix = "robot-app-install-"

// source is where an install takes its package from (core/apps/origin).
type source = origin.Source

// RedactURL and RedactText hide the credentials of URLs, for logs, API answers and errors
// (core/apps/origin).
var (
	RedactURL  = origin.RedactURL
	RedactText = origin.RedactText
)
