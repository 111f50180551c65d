// Package hubemu is the local hub's domain and services: users and their tokens, webhooks (the
// public hub's management API, with its validation), the events users emit and the deliveries
// they cause (with the trigger limit), source jobs, discussions, and each webhook's activity with
// replay. It holds no SQL and no HTTP: what it keeps goes through the Store interface
// (internal/hubemu/store), deliveries are sent by internal/hubemu/delivery, spaces are
// internal/hubemu/spaces, and internal/hubemu/http serves it all; internal/hubemu/localhub
// assembles them.
package hubemu
