module github.com/session-sidecar/session-sidecar/clients/go

go 1.24
