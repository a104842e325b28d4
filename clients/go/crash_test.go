package sidecar

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
)

type sentBatch struct {
	payloads []string
	first    int64
	last     int64
	err      error
}

// SIGKILL of the sidecar while appends are pipelined from several goroutines: every append
// that was acknowledged is, after a restart, at its seqs with its exact bytes; every other
// one failed with KindExited (sent: OutcomeUncertain) or KindConnectionClosed (not sent:
// OutcomeNotWritten), and each of those is in the journal whole or not at all.
func TestSigkillMidPipeline(t *testing.T) {
	forEachFraming(t, func(t *testing.T, framing Framing) {
		ctx := testCtx(t)
		store := newStore(t)
		c1 := start(t, framing, store)
		sid := mustCreate(t, c1, SessionCreateParams{Title: Ptr("crash")})

		const writers = 6
		var mu sync.Mutex
		var batches []*sentBatch
		acked := make(chan struct{}, 1<<16)
		var wg sync.WaitGroup
		for w := 0; w < writers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for i := 0; ; i++ {
					b := &sentBatch{}
					var recs Records
					for j := 0; j <= (w+i)%3; j++ { // batches of 1 to 3 records
						p := fmt.Sprintf(`{"w":%d,"i":%d,"j":%d,"text":"héllo <%d>"}`, w, i, j, i*j)
						b.payloads = append(b.payloads, p)
						recs = append(recs, event("crash.test", p))
					}
					res, err := c1.SessionAppend(ctx, SessionAppendParams{SessionID: sid, Records: recs})
					if err == nil {
						b.first, b.last = res.FirstSeq, res.LastSeq
					}
					b.err = err
					mu.Lock()
					batches = append(batches, b)
					mu.Unlock()
					if err != nil {
						return
					}
					acked <- struct{}{}
				}
			}(w)
		}
		for n := 0; n < 200; n++ {
			<-acked
		}
		ok(t, c1.Kill())
		wg.Wait()

		var nAcked, nUncertain, nNotSent int
		for _, b := range batches {
			switch {
			case b.err == nil:
				nAcked++
				if b.last-b.first+1 != int64(len(b.payloads)) {
					t.Fatalf("acknowledged %d..%d for %d records", b.first, b.last, len(b.payloads))
				}
			case KindOf(b.err) == KindExited && OutcomeOf(b.err) == OutcomeUncertain:
				nUncertain++
			case KindOf(b.err) == KindConnectionClosed && OutcomeOf(b.err) == OutcomeNotWritten:
				nNotSent++
			default:
				t.Fatalf("an append failed with %v (%s, %v)", b.err, KindOf(b.err), OutcomeOf(b.err))
			}
		}
		if d, found := DataOf[ExitedData](batchErr(batches)); found && d.Signal == "" {
			t.Errorf("the exit is not reported as a signal: %+v", d)
		}
		t.Logf("%s: %d acknowledged, %d in flight at the kill, %d not sent", framing, nAcked, nUncertain, nNotSent)

		// A new sidecar on the same store: the lease of the killed one is taken over (its pid
		// is gone), a torn tail is cut.
		c2 := start(t, framing, store)
		opened, err := c2.SessionOpen(ctx, SessionOpenParams{SessionID: Ptr(sid)})
		ok(t, err)
		records, err := c2.ReadAll(ctx, SessionReadParams{SessionID: sid})
		ok(t, err)
		if int64(len(records)) != opened.LastSeq {
			t.Fatalf("%d records, lastSeq %d", len(records), opened.LastSeq)
		}
		bySeq := map[int64]string{}
		count := map[string]int{} // by "w/i": records of each batch present
		for i, r := range records {
			if r.GetSeq() != int64(i+1) {
				t.Fatalf("seq %d at position %d: not gapless", r.GetSeq(), i)
			}
			ev := r.(StoredEventRecord)
			bySeq[r.GetSeq()] = string(ev.Payload)
			var k struct{ W, I int }
			ok(t, json.Unmarshal(ev.Payload, &k))
			count[fmt.Sprintf("%d/%d", k.W, k.I)]++
		}
		for _, b := range batches {
			var k struct{ W, I int }
			ok(t, json.Unmarshal([]byte(b.payloads[0]), &k))
			present := count[fmt.Sprintf("%d/%d", k.W, k.I)]
			if b.err == nil {
				for j, p := range b.payloads {
					if got := bySeq[b.first+int64(j)]; got != p {
						t.Fatalf("acknowledged seq %d: %q, sent %q", b.first+int64(j), got, p)
					}
				}
				continue
			}
			if present != 0 && present != len(b.payloads) {
				t.Fatalf("an unacknowledged batch of %d records is there in part (%d)", len(b.payloads), present)
			}
			if present != 0 && KindOf(b.err) == KindConnectionClosed {
				t.Fatalf("an append reported as not sent is in the journal")
			}
		}
		// It is writable again here.
		_, err = c2.SessionAppend(ctx, SessionAppendParams{SessionID: sid, Records: Records{userMessage("after the crash")}, ExpectedLastSeq: Ptr(opened.LastSeq)})
		ok(t, err)
	})
}

func batchErr(bs []*sentBatch) error {
	for _, b := range bs {
		if KindOf(b.err) == KindExited {
			return b.err
		}
	}
	return nil
}
