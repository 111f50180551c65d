// Package httpapi is the robot daemon's HTTP plumbing, shared by every route package of robotd:
// JSON answers and request bodies (size caps, the body deadline, errors that name the field),
// errors to HTTP statuses (StatusOf, through the one table of core/fault/httpstatus), server-sent
// events, a job's log on a websocket, and the small interface through which handlers take a stream
// slot from the daemon's access control. It holds no route and knows no handler.
package httpapi
