package sidecar

import (
	"fmt"
	"testing"
)

// collectSeqs receives notifications until the records of sid reach seq upTo; it returns
// the seqs of the records in the order they came, and fails on one of another session.
func collectSeqs(t *testing.T, c *Client, sid string, upTo int64) []int64 {
	t.Helper()
	var seqs []int64
	for len(seqs) == 0 || seqs[len(seqs)-1] < upTo {
		n := nextNotification(t, c)
		switch {
		case n.SessionDidAppend != nil:
			if n.SessionDidAppend.SessionID != sid {
				t.Fatalf("a notification of session %s", n.SessionDidAppend.SessionID)
			}
			for _, r := range n.SessionDidAppend.Records {
				seqs = append(seqs, r.GetSeq())
			}
		case n.SessionDidOverflow != nil:
			t.Fatalf("an overflow: %+v (synthetic %v)", n.SessionDidOverflow, n.Synthetic)
		}
	}
	return seqs
}

func contiguous(t *testing.T, seqs []int64, from, to int64) {
	t.Helper()
	if int64(len(seqs)) != to-from+1 {
		t.Fatalf("seqs %v, want %d..%d", seqs, from, to)
	}
	for i, s := range seqs {
		if s != from+int64(i) {
			t.Fatalf("seqs %v, want %d..%d each once", seqs, from, to)
		}
	}
}

// Notifications in one process: the stored records then the new ones, each once, in seq
// order; turn/didChange after turn records; nothing after session/unsubscribe.
func TestNotifications(t *testing.T) {
	forEachFraming(t, func(t *testing.T, framing Framing) {
		ctx := testCtx(t)
		c := start(t, framing, newStore(t))
		sid := mustCreate(t, c, SessionCreateParams{})
		for i := 0; i < 3; i++ {
			_, err := c.SessionAppend(ctx, SessionAppendParams{SessionID: sid, Records: Records{userMessage(fmt.Sprint("before ", i))}})
			ok(t, err)
		}
		sub, err := c.SessionSubscribe(ctx, SessionSubscribeParams{SessionID: sid, AfterSeq: Ptr(int64(1))})
		ok(t, err)
		if sub.LastSeq != 3 {
			t.Fatalf("subscribe: %+v", sub)
		}
		contiguous(t, collectSeqs(t, c, sid, 3), 2, 3)
		for i := 0; i < 4; i++ {
			_, err := c.SessionAppend(ctx, SessionAppendParams{SessionID: sid, Records: Records{event("e", fmt.Sprint(i))}})
			ok(t, err)
		}
		contiguous(t, collectSeqs(t, c, sid, 7), 4, 7)

		// A turn record, then turn/didChange with the turn state.
		turn, err := c.TurnStart(ctx, TurnStartParams{SessionID: sid, Kind: TurnKindBackground})
		ok(t, err)
		var sawRecord bool
		for {
			n := nextNotification(t, c)
			if n.SessionDidAppend != nil {
				r := n.SessionDidAppend.Records[0].(StoredTurnRecord)
				sawRecord = r.TurnID == turn.TurnID && r.Event == TurnEventStart && r.Seq == 8
				continue
			}
			if n.TurnDidChange == nil || n.TurnDidChange.Turn == nil || n.TurnDidChange.Turn.TurnID != turn.TurnID || n.TurnDidChange.Turn.Status != TurnStatusActive {
				t.Fatalf("want turn/didChange, got %+v", n)
			}
			break
		}
		if !sawRecord {
			t.Fatalf("the turn record came not before turn/didChange")
		}

		// Unsubscribed, an append is not delivered: after subscribing again from its seq, the
		// next record delivered is the one after it.
		ok(t, c.SessionUnsubscribe(ctx, SessionUnsubscribeParams{SessionID: sid}))
		app, err := c.SessionAppend(ctx, SessionAppendParams{SessionID: sid, Records: Records{event("unseen", "1")}})
		ok(t, err)
		_, err = c.SessionSubscribe(ctx, SessionSubscribeParams{SessionID: sid, AfterSeq: Ptr(app.LastSeq)})
		ok(t, err)
		next, err := c.SessionAppend(ctx, SessionAppendParams{SessionID: sid, Records: Records{event("seen", "2")}})
		ok(t, err)
		contiguous(t, collectSeqs(t, c, sid, next.LastSeq), next.LastSeq, next.LastSeq)
	})
}

// A receiver that does not keep up: the client's buffer overflows, it says so with a
// synthetic session/didOverflow (the last seq that got into the buffer), drops the rest of
// that subscription, and a resubscription from there delivers every later record once.
func TestNotificationBufferOverflow(t *testing.T) {
	forEachFraming(t, func(t *testing.T, framing Framing) {
		ctx := testCtx(t)
		const buffer = 4
		c := start(t, framing, newStore(t), func(o *Options) { o.NotificationBuffer = buffer })
		sid := mustCreate(t, c, SessionCreateParams{})
		_, err := c.SessionSubscribe(ctx, SessionSubscribeParams{SessionID: sid})
		ok(t, err)
		var last int64
		for i := 0; c.DroppedNotifications() == 0; i++ {
			if i == 1000 {
				t.Fatalf("1000 appends, no notification dropped with a buffer of %d", buffer)
			}
			app, err := c.SessionAppend(ctx, SessionAppendParams{SessionID: sid, Records: Records{event("e", fmt.Sprint(i))}})
			ok(t, err)
			last = app.LastSeq
		}
		// The buffered records, from seq 1 on, then the synthetic overflow naming the last.
		var seqs []int64
		var overflow *SessionDidOverflowParams
		for overflow == nil {
			n := nextNotification(t, c)
			switch {
			case n.SessionDidAppend != nil:
				for _, r := range n.SessionDidAppend.Records {
					seqs = append(seqs, r.GetSeq())
				}
			case n.SessionDidOverflow != nil:
				if !n.Synthetic {
					t.Fatalf("the server's overflow, not the client's: %+v", n.SessionDidOverflow)
				}
				overflow = n.SessionDidOverflow
			}
		}
		if len(seqs) == 0 || overflow.LastDeliveredSeq != seqs[len(seqs)-1] || overflow.SessionID != sid {
			t.Fatalf("overflow %+v after seqs %v", overflow, seqs)
		}
		contiguous(t, seqs, 1, overflow.LastDeliveredSeq)
		// Resubscribe from there: every later record once, none of the dropped subscription.
		_, err = c.SessionSubscribe(ctx, SessionSubscribeParams{SessionID: sid, AfterSeq: Ptr(overflow.LastDeliveredSeq)})
		ok(t, err)
		app, err := c.SessionAppend(ctx, SessionAppendParams{SessionID: sid, Records: Records{event("after", "0")}})
		ok(t, err)
		if app.LastSeq != last+1 {
			t.Fatalf("lastSeq %d after %d", app.LastSeq, last)
		}
		var rest []int64
		for len(rest) == 0 || rest[len(rest)-1] < app.LastSeq {
			n := nextNotification(t, c)
			if n.SessionDidOverflow != nil {
				t.Fatalf("overflow again: %+v", n.SessionDidOverflow)
			}
			if n.SessionDidAppend != nil {
				for _, r := range n.SessionDidAppend.Records {
					rest = append(rest, r.GetSeq())
				}
			}
		}
		contiguous(t, rest, overflow.LastDeliveredSeq+1, app.LastSeq)
	})
}

// Two sidecar processes on one store: one writer per session (SessionLocked names the
// holder), the other reads it and is notified of the first one's appends; once the writer
// closes it, the other can write.
func TestTwoClientsOneStore(t *testing.T) {
	forEachFraming(t, func(t *testing.T, framing Framing) {
		ctx := testCtx(t)
		store := newStore(t)
		a := start(t, framing, store)
		b := start(t, framing, store)
		sid := mustCreate(t, a, SessionCreateParams{Title: Ptr("shared")})
		for i := 0; i < 3; i++ {
			_, err := a.SessionAppend(ctx, SessionAppendParams{SessionID: sid, Records: Records{userMessage(fmt.Sprint("a", i))}})
			ok(t, err)
		}

		_, err := b.SessionOpen(ctx, SessionOpenParams{SessionID: Ptr(sid)})
		d, found := DataOf[SessionLockedData](err)
		if !found || KindOf(err) != KindSessionLocked || OutcomeOf(err) != OutcomeNotWritten || d.Holder == nil || d.Holder.PID != int64(a.PID()) {
			t.Fatalf("b opens a's session for writing: %v (%+v)", err, d)
		}
		ro, err := b.SessionOpen(ctx, SessionOpenParams{SessionID: Ptr(sid), Mode: Ptr(OpenModeRead)})
		ok(t, err)
		if ro.Mode != OpenModeRead || ro.LastSeq != 3 {
			t.Fatalf("read open: %+v", ro)
		}
		_, err = b.SessionAppend(ctx, SessionAppendParams{SessionID: sid, Records: Records{userMessage("b")}})
		if rd, _ := DataOf[ReadOnlyData](err); rd == nil || rd.Reason != "openedReadOnly" {
			t.Fatalf("b appends: %v", err)
		}

		// b follows a's appends, across processes.
		_, err = b.SessionSubscribe(ctx, SessionSubscribeParams{SessionID: sid})
		ok(t, err)
		contiguous(t, collectSeqs(t, b, sid, 3), 1, 3)
		for i := 0; i < 2; i++ {
			_, err := a.SessionAppend(ctx, SessionAppendParams{SessionID: sid, Records: Records{userMessage(fmt.Sprint("a", 3+i))}})
			ok(t, err)
		}
		contiguous(t, collectSeqs(t, b, sid, 5), 4, 5)
		list, err := b.SessionList(ctx, SessionListParams{})
		ok(t, err)
		if len(list.Sessions) != 1 || list.Sessions[0].LastSeq != 5 {
			t.Fatalf("b lists: %+v", list.Sessions)
		}

		// a lets go; b writes; a reads what b wrote (reading needs no open).
		ok(t, a.SessionClose(ctx, SessionCloseParams{SessionID: sid}))
		_, err = b.SessionOpen(ctx, SessionOpenParams{SessionID: Ptr(sid)})
		ok(t, err)
		_, err = b.SessionAppend(ctx, SessionAppendParams{SessionID: sid, Records: Records{userMessage("from b")}, ExpectedLastSeq: Ptr(int64(5))})
		ok(t, err)
		recs, err := a.ReadAll(ctx, SessionReadParams{SessionID: sid})
		ok(t, err)
		if len(recs) != 6 || string(recs[5].(StoredMessageRecord).Message.Content) != `"from b"` {
			t.Fatalf("a reads %d records", len(recs))
		}
	})
}
