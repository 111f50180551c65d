package cliapp

// RobothubUsage is robothub's one-line description in its help.
const RobothubUsage = "webhooks on a model hub: receive them, manage them, and run a local hub"

// CommandUsage is a command's name and the usage line its parent's help gives it.
type CommandUsage struct{ Name, Usage string }

// RobothubCommands are robothub's commands in the order its help lists them. Both of its programs
// build their help from this one list: robothub-server, which runs every command, and robothub's
// front (cli/robothub), which runs webhooks and hands the others to robothub-server.
var RobothubCommands = []CommandUsage{
	{"serve", "run a webhook receiver whose routes run commands, log or forward payloads"},
	{"webhooks", "manage the webhooks of your hub account: ls, info, create, update, enable, disable, delete"},
	{"hub", "run and drive the local hub emulator: serve, token, emit, job, spaces"},
	{"dev", "run the whole system on this machine: the local hub, a receiver and the simulated robot, wired together"},
	{"fleet", "see and wait for the robots of a fleet (robot-daemon --fleet) through its MQTT broker"},
	{"release", "make, sign and publish robot-daemon's own releases (make release runs these)"},
	{"completion", "print a shell completion script: bash, zsh or fish"},
}

// RobothubUsageOf is the usage line of robothub's command name ("" for none).
func RobothubUsageOf(name string) string {
	for _, c := range RobothubCommands {
		if c.Name == name {
			return c.Usage
		}
	}
	return ""
}
