package sidecar

import (
	"fmt"
	"slices"
	"testing"
)

// The paging helpers walk every page: records on nextAfterSeq, sessions and search hits on
// nextCursor; breaking out of the loop stops asking.
func TestPagingHelpers(t *testing.T) {
	forEachFraming(t, func(t *testing.T, framing Framing) {
		ctx := testCtx(t)
		c := start(t, framing, newStore(t))
		var ids []string
		for s := 0; s < 5; s++ {
			sid := mustCreate(t, c, SessionCreateParams{Title: Ptr(fmt.Sprint("s", s))})
			ids = append(ids, sid)
			var recs Records
			for i := 0; i < 25; i++ {
				recs = append(recs, userMessage(fmt.Sprintf("needle %d in %d", i, s)))
			}
			_, err := c.SessionAppend(ctx, SessionAppendParams{SessionID: sid, Records: recs})
			ok(t, err)
		}

		var seqs []int64
		for r, err := range c.ReadRecords(ctx, SessionReadParams{SessionID: ids[0], Limit: Ptr(int64(7)), AfterSeq: Ptr(int64(2))}) {
			ok(t, err)
			seqs = append(seqs, r.GetSeq())
		}
		contiguous(t, seqs, 3, 25)
		// kinds: pages may hold none of the kind, yet the walk goes on to the end.
		all, err := c.ReadAll(ctx, SessionReadParams{SessionID: ids[0], Limit: Ptr(int64(4)), Kinds: []string{"event"}})
		ok(t, err)
		if len(all) != 0 {
			t.Errorf("%d events", len(all))
		}

		var listed []string
		for s, err := range c.ListSessions(ctx, SessionListParams{Limit: Ptr(int64(2))}) {
			ok(t, err)
			listed = append(listed, s.SessionID)
		}
		want := slices.Clone(ids)
		slices.Reverse(want) // most recently updated first
		if !slices.Equal(listed, want) {
			t.Errorf("listed %v, want %v", listed, want)
		}

		var hits []string
		for h, err := range c.SearchHits(ctx, SessionSearchParams{Query: "needle 1", Limit: Ptr(int64(3))}) {
			ok(t, err)
			hits = append(hits, fmt.Sprintf("%s/%d", h.SessionID, h.Seq))
		}
		if len(hits) != 5*11 { // "needle 1" and "needle 10".."needle 19" in each session
			t.Errorf("%d hits", len(hits))
		}

		n := 0
		for range c.ReadRecords(ctx, SessionReadParams{SessionID: ids[1], Limit: Ptr(int64(1))}) {
			if n++; n == 3 {
				break
			}
		}
		if n != 3 {
			t.Errorf("break: %d", n)
		}
		// An error is yielded once and ends the walk.
		var errs int
		for _, err := range c.ReadRecords(ctx, SessionReadParams{SessionID: "01ZZZZZZZZZZZZZZZZZZZZZZZZ"}) {
			if KindOf(err) != KindSessionNotFound {
				t.Fatalf("%v", err)
			}
			errs++
		}
		if errs != 1 {
			t.Errorf("%d errors", errs)
		}
	})
}
