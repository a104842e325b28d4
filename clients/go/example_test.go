package sidecar_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	sidecar "github.com/session-sidecar/session-sidecar/clients/go"
)

// The README's example: spawn, create, append, read back, handle an error by its kind.
func Example() {
	ctx := context.Background()
	store, _ := os.MkdirTemp("", "sidecar-example-")
	defer os.RemoveAll(store)

	c, err := sidecar.Start(ctx, sidecar.Options{Store: store + "/store"}) // $SESSION_SIDECAR_COMMAND or session-sidecar
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close() // shutdown, exit, wait
	s, _ := c.SessionCreate(ctx, sidecar.SessionCreateParams{Title: sidecar.Ptr("Fix the build")})
	hi := sidecar.MessageRecord{Message: sidecar.ChatMessage{Role: "user", Content: sidecar.MustJSON("Why does CI fail?")}}
	res, err := c.SessionAppend(ctx, sidecar.SessionAppendParams{SessionID: s.SessionID, Records: sidecar.Records{hi}})
	if err != nil && sidecar.OutcomeOf(err) == sidecar.OutcomeUncertain {
		log.Fatal("maybe written: restart the sidecar, reopen the session and read it back: ", err)
	}
	fmt.Println("durable at seq", res.LastSeq)
	for rec, err := range c.ReadRecords(ctx, sidecar.SessionReadParams{SessionID: s.SessionID}) {
		if err != nil {
			log.Fatal(err)
		}
		m := rec.(sidecar.StoredMessageRecord)
		fmt.Println(m.Seq, m.Message.Role, string(m.Message.Content))
	}
	_, err = c.SessionAppend(ctx, sidecar.SessionAppendParams{SessionID: s.SessionID, Records: sidecar.Records{hi}, ExpectedLastSeq: sidecar.Ptr(int64(0))})
	var e *sidecar.Error
	if errors.As(err, &e) && e.Kind == sidecar.KindConflict {
		d := e.Data.(*sidecar.ConflictData)
		fmt.Println(e.Kind, "lastSeq is", *d.LastSeq, "- nothing written:", e.Outcome() == sidecar.OutcomeNotWritten)
	}
	// Output:
	// durable at seq 1
	// 1 user "Why does CI fail?"
	// Conflict lastSeq is 1 - nothing written: true
}
