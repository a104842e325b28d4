package sidecar

import (
	"encoding/json"
	"sync"
)

// Notifications returns the channel of the server's notifications (session/didAppend,
// session/didOverflow, turn/didChange: protocol §14), in the order they arrived. It is
// closed when the connection has ended and everything buffered was received, or at once by
// Close. There is one channel per Client; receive from one goroutine for ordered delivery.
//
// Buffering and overflow: up to Options.NotificationBuffer notifications wait for the
// receiver; the reader of the sidecar's output never blocks on them (answers keep coming).
// When the buffer is full, the notification that does not fit is dropped and its session's
// subscription is treated as overflowed, exactly as the server treats a client that fell
// behind: this client queues a session/didOverflow of its own (Synthetic: true) with
// lastDeliveredSeq = the seq of the last record of that session that did get into the
// buffer (or the subscription's afterSeq), and drops every later notification of that
// session until it is subscribed again. So nothing is ever skipped silently: on any
// didOverflow, server's or synthetic, call SessionSubscribe with AfterSeq =
// LastDeliveredSeq and the records continue from there, each exactly once. A notification
// of no subscribed session that does not fit is dropped and counted (DroppedNotifications).
// The buffer holds at most NotificationBuffer notifications plus one synthetic
// didOverflow per overflowed session.
func (c *Client) Notifications() <-chan Notification { return c.notes.out }

// DroppedNotifications is how many notifications did not fit the buffer (see Notifications).
func (c *Client) DroppedNotifications() int64 {
	c.notes.mu.Lock()
	defer c.notes.mu.Unlock()
	return c.notes.dropped
}

type subscription struct {
	lastSeq    int64 // of the last record of it that got into the buffer
	overflowed bool  // dropped until subscribed again
}

type notifier struct {
	mu       sync.Mutex
	queue    []Notification
	max      int
	subs     map[string]*subscription
	dropped  int64
	ended    bool // the connection ended: close out once the queue is empty
	wake     chan struct{}
	stopCh   chan struct{}
	stopOnce sync.Once
	out      chan Notification
}

func newNotifier(max int) *notifier {
	return &notifier{
		max: max, subs: map[string]*subscription{}, wake: make(chan struct{}, 1),
		stopCh: make(chan struct{}), out: make(chan Notification),
	}
}

func (q *notifier) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// sessionOf is the session a notification of the protocol is about ("" for others).
func sessionOf(n *Notification) string {
	switch {
	case n.SessionDidAppend != nil:
		return n.SessionDidAppend.SessionID
	case n.SessionDidOverflow != nil:
		return n.SessionDidOverflow.SessionID
	case n.TurnDidChange != nil:
		return n.TurnDidChange.SessionID
	}
	return ""
}

// push runs on the reader goroutine; it never blocks.
func (q *notifier) push(n Notification) {
	q.mu.Lock()
	defer q.mu.Unlock()
	sid := sessionOf(&n)
	sub := q.subs[sid]
	if sub != nil && sub.overflowed {
		q.dropped++
		return
	}
	if len(q.queue) >= q.max {
		q.dropped++
		if sub != nil {
			sub.overflowed = true
			q.queue = append(q.queue, syntheticOverflow(sid, sub.lastSeq))
		}
		q.signal()
		return
	}
	if n.SessionDidAppend != nil && sub != nil {
		if recs := n.SessionDidAppend.Records; len(recs) > 0 {
			sub.lastSeq = recs[len(recs)-1].GetSeq()
		}
	}
	if n.SessionDidOverflow != nil && sub != nil {
		delete(q.subs, sid) // the server dropped the subscription
	}
	q.queue = append(q.queue, n)
	q.signal()
}

func syntheticOverflow(sid string, last int64) Notification {
	p := &SessionDidOverflowParams{SessionID: sid, LastDeliveredSeq: last}
	raw, _ := encodeJSON(p)
	return Notification{Method: "session/didOverflow", Params: json.RawMessage(raw), Synthetic: true, SessionDidOverflow: p}
}

// subscribed runs on the reader goroutine when a session/subscribe succeeded, before any
// notification that follows its answer.
func (q *notifier) subscribed(sid string, afterSeq int64) {
	q.mu.Lock()
	q.subs[sid] = &subscription{lastSeq: afterSeq}
	q.mu.Unlock()
}

func (q *notifier) unsubscribed(sid string) {
	q.mu.Lock()
	delete(q.subs, sid)
	q.mu.Unlock()
}

func (q *notifier) end() {
	q.mu.Lock()
	q.ended = true
	q.mu.Unlock()
	q.signal()
}

func (q *notifier) stop() { q.stopOnce.Do(func() { close(q.stopCh) }) }

// pump hands the queue to the receiver of out.
func (q *notifier) pump() {
	defer close(q.out)
	for {
		q.mu.Lock()
		if len(q.queue) == 0 {
			ended := q.ended
			q.queue = nil
			q.mu.Unlock()
			if ended {
				return
			}
			select {
			case <-q.wake:
			case <-q.stopCh:
				return
			}
			continue
		}
		n := q.queue[0]
		q.queue[0] = Notification{}
		q.queue = q.queue[1:]
		q.mu.Unlock()
		select {
		case q.out <- n:
		case <-q.stopCh:
			return
		}
	}
}
