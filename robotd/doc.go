// Package robotd is the robot daemon (`robot-daemon`): it serves the robot and runs its apps, one at
// a time, behind a REST API, a state stream for the SDK, and a dashboard.
//
// This package is the wiring: Config and Serve (serve.go), the robot's backend and media devices,
// NewServer, and routes.go, the one table of every route. It keeps the dashboard and mDNS. The
// command's flags, variables and help live in cmd/robotdaemon, which resolves them into a Config;
// this package imports no flag library. The routes live in rooms of their own:
//
//	httpapi/     the HTTP plumbing every route package shares (JSON, fault kind -> status, SSE)
//	access/      the tokens and their scopes, the owner socket, the login, host checks, caps
//	appsapi/     the app routes and SDK sessions, over appsapi.Apps
//	daemonapi/   the daemon's status, control, name, hardware id, app lock and hub login
//	robotapi/    the robot's state, motion, motor, recorded-move and kinematics routes
//	mediaapi/    the media, audio, camera, volume and WebRTC routes
//	updateapi/   the daemon's self-update routes
//	fleetagent/  the fleet settings and agent
//	pysdk/       the Python SDK the daemon installs into its apps venv
//	cmd/         robotdaemon/ (the robot-daemon command: flags -> Config) and robot-daemon/ (its main)
package robotd
