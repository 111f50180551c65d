package robotd

import "net/http"

// routes lists the whole API surface; docs/robot-api.md documents each route.
func (s *Server) routes(mux *http.ServeMux) {
	mux.HandleFunc("GET /healthz", s.handleHealthz)
	mux.Handle("GET /{$}", s.handleDashboard())
	mux.Handle("GET /dashboard/", s.handleDashboardAssets())
	mux.HandleFunc("GET /login", s.handleLogin)
	mux.HandleFunc("POST /login", s.handleLogin)

	// Apps: the spec's four calls and what the anchor daemon's users rely on.
	mux.HandleFunc("POST /api/apps/install", s.handleInstall)
	mux.HandleFunc("POST /api/apps/update", s.handleUpdate)
	mux.HandleFunc("POST /api/apps/remove/{app_name}", s.handleRemove)
	mux.HandleFunc("GET /api/apps/job-status/{job_id}", s.handleJobStatus)
	mux.HandleFunc("GET /api/apps/job-log/{job_id}", s.handleJobLog)
	mux.HandleFunc("GET /api/apps/list", s.handleList)
	mux.HandleFunc("GET /api/apps/list-available", s.handleListAvailable)
	mux.HandleFunc("GET /api/apps/list-available/{source_kind}", s.handleListAvailable)
	mux.HandleFunc("POST /api/apps/start-app/{app_name}", s.handleStartApp)
	mux.HandleFunc("POST /api/apps/start-app/{app_name}/no-evict", s.handleStartAppNoEvict)
	mux.HandleFunc("POST /api/apps/stop-current-app", s.handleStopApp)
	mux.HandleFunc("POST /api/apps/restart-current-app", s.handleRestartApp)
	mux.HandleFunc("GET /api/apps/current-app-status", s.handleCurrentAppStatus)
	mux.HandleFunc("GET /api/apps/current-app-logs", s.handleCurrentAppLogs)
	mux.HandleFunc("GET /api/apps/startup-app", s.handleGetStartupApp)
	mux.HandleFunc("PUT /api/apps/startup-app", s.handlePutStartupApp)
	mux.HandleFunc("POST /api/apps/install-private-space", s.handleInstallPrivateSpace)
	mux.HandleFunc("GET /api/apps/check-updates", s.handleCheckUpdates)
	mux.HandleFunc("POST /api/apps/update/{app_name}", s.handleUpdateApp)
	mux.HandleFunc("GET /api/apps/ws/apps-manager/{job_id}", s.handleJobWebSocket)

	// Robot: state, moves, motors, audio, and the simulation's antenna touch.
	mux.HandleFunc("GET /api/state/full", s.handleFullState)
	mux.HandleFunc("GET /api/state/stream", s.handleStateStream)
	mux.HandleFunc("POST /api/move/set_target", s.handleSetTarget)
	mux.HandleFunc("POST /api/move/goto", s.handleGoto)
	mux.HandleFunc("POST /api/move/play/wake_up", s.handleWakeUp)
	mux.HandleFunc("POST /api/move/play/goto_sleep", s.handleGotoSleep)
	mux.HandleFunc("POST /api/move/stop", s.handleStopMove)
	mux.HandleFunc("GET /api/motors/status", s.handleMotorStatus)
	mux.HandleFunc("POST /api/motors/set_mode/{mode}", s.handleSetMotorMode)
	mux.HandleFunc("POST /api/audio/start_recording", s.handleStartRecording)
	mux.HandleFunc("POST /api/audio/stop_recording", s.handleStopRecording)
	mux.HandleFunc("GET /api/audio/sample", s.handleAudioSample)
	mux.HandleFunc("POST /api/audio/push_sample", s.handlePushAudio)
	mux.HandleFunc("POST /api/audio/play_sound", s.handlePlaySound)
	mux.HandleFunc("POST /api/audio/stop_sound", s.handleStopSound)
	mux.HandleFunc("POST /api/sim/antenna-touch", s.handleAntennaTouch)
	mux.HandleFunc("GET /api/state/present_head_pose", s.handlePresentHeadPose)
	mux.HandleFunc("GET /api/state/present_body_yaw", s.handlePresentBodyYaw)
	mux.HandleFunc("GET /api/state/present_antenna_joint_positions", s.handlePresentAntennas)
	mux.HandleFunc("GET /api/move/running", s.handleRunningMoves)
	mux.HandleFunc("POST /api/move/look_at_world", s.handleLookAtWorld)
	mux.HandleFunc("POST /api/move/look_at_image", s.handleLookAtImage)
	mux.HandleFunc("POST /api/move/recording/start", s.handleStartMotionRecording)
	mux.HandleFunc("POST /api/move/recording/stop", s.handleStopMotionRecording)
	mux.HandleFunc("POST /api/motors/torque", s.handleSetTorque)
	mux.HandleFunc("POST /api/motors/automatic_body_yaw", s.handleAutomaticBodyYaw)
	mux.HandleFunc("GET /api/camera/specs", s.handleCameraSpecs)
	mux.HandleFunc("GET /api/camera/frame", s.handleCameraFrame)

	// The speech wobble and head tracking (handlers_behaviours.go).
	mux.HandleFunc("POST /api/media/wobbling/enable", s.handleWobbling(true))
	mux.HandleFunc("POST /api/media/wobbling/disable", s.handleWobbling(false))
	mux.HandleFunc("POST /api/media/tracking/enable", s.handleTrackingEnable)
	mux.HandleFunc("POST /api/media/tracking/disable", s.handleTrackingDisable)
	mux.HandleFunc("GET /api/media/tracking/face", s.handleTrackedFace)

	// SDK sessions: the app slot is shared with remote SDK clients.
	mux.HandleFunc("POST /api/sessions", s.handleOpenSession)
	mux.HandleFunc("POST /api/sessions/{session_id}/heartbeat", s.handleHeartbeat)
	mux.HandleFunc("DELETE /api/sessions/{session_id}", s.handleCloseSession)

	// The daemon: its status, the robot's control, name and hardware id, the app lock.
	mux.HandleFunc("GET /api/daemon/status", s.handleDaemonStatus)
	mux.HandleFunc("POST /api/daemon/start", s.handleDaemonStart)
	mux.HandleFunc("POST /api/daemon/stop", s.handleDaemonStop)
	mux.HandleFunc("POST /api/daemon/restart", s.handleDaemonRestart)
	mux.HandleFunc("GET /api/daemon/robot-name", s.handleGetRobotName)
	mux.HandleFunc("POST /api/daemon/robot-name", s.handleSetRobotName)
	mux.HandleFunc("GET /api/daemon/hardware-id", s.handleHardwareID)
	mux.HandleFunc("GET /api/daemon/robot-app-lock-status", s.handleLockStatus)

	// The robot's hub login (handlers_control.go).
	mux.HandleFunc("POST /api/hf-auth/save-token", s.handleSaveToken)
	mux.HandleFunc("GET /api/hf-auth/status", s.handleAuthStatus)
	mux.HandleFunc("DELETE /api/hf-auth/token", s.handleDeleteToken)
	mux.HandleFunc("GET /api/hf-auth/relay-status", s.handleRelayStatus)
	mux.HandleFunc("POST /api/hf-auth/refresh-relay", s.handleRefreshRelay)
	mux.HandleFunc("GET /api/hf-auth/central-robot-status", s.handleCentralRobotStatus)
	mux.HandleFunc("GET /api/hf-auth/oauth/configured", s.handleOAuthConfigured)
	mux.HandleFunc("GET /api/hf-auth/oauth/start", s.handleOAuthUnavailable)
	mux.HandleFunc("GET /api/hf-auth/oauth/begin", s.handleOAuthUnavailable)
	mux.HandleFunc("GET /api/hf-auth/oauth/callback", s.handleOAuthUnavailable)
	mux.HandleFunc("POST /api/hf-auth/oauth/device/start", s.handleOAuthUnavailable)
	mux.HandleFunc("GET /api/hf-auth/oauth/status/{session_id}", s.handleOAuthSessionStatus)
	mux.HandleFunc("GET /api/hf-auth/oauth/device/status/{session_id}", s.handleOAuthSessionStatus)
	mux.HandleFunc("DELETE /api/hf-auth/oauth/session/{session_id}", s.handleOAuthSessionCancel)
	mux.HandleFunc("DELETE /api/hf-auth/oauth/device/session/{session_id}", s.handleOAuthSessionCancel)

	// Kinematics and the robot's description for 3D viewers (handlers_kinematics.go).
	mux.HandleFunc("GET /api/kinematics/info", s.handleKinematicsInfo)
	mux.HandleFunc("GET /api/kinematics/urdf", s.handleURDF)
	mux.HandleFunc("GET /api/kinematics/stl/{filename}", s.handleSTL)
	mux.HandleFunc("/api/", s.handleUnknownAPI)
}
