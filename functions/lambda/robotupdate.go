//go:build robothub.robotupdate

package main

import "github.com/robothub/robothub/internal/actions"

// Built with -tags robothub.robotupdate (make lambda-zip LAMBDA_ROBOT_UPDATE=1), the bootstrap has
// the robot-update action, and the robot daemon's client it calls (0.1 MB).
func init() { robotUpdate = actions.RobotUpdate }
