package sidecar

import (
	"context"
	"encoding/base64"
	"iter"
)

// ReadRecords iterates over a session's records from p.AfterSeq on, page by page
// (session/read with p; each next page starts at the previous page's nextAfterSeq, until it
// is null — protocol §4.8). An error ends the iteration after being yielded once.
//
//	for rec, err := range c.ReadRecords(ctx, sidecar.SessionReadParams{SessionID: id}) { ... }
func (c *Client) ReadRecords(ctx context.Context, p SessionReadParams) iter.Seq2[StoredRecord, error] {
	return func(yield func(StoredRecord, error) bool) {
		for {
			page, err := c.SessionRead(ctx, p)
			if err != nil {
				yield(nil, err)
				return
			}
			for _, r := range page.Records {
				if !yield(r, nil) {
					return
				}
			}
			if page.NextAfterSeq == nil {
				return
			}
			p.AfterSeq = Ptr(*page.NextAfterSeq)
		}
	}
}

// ReadAll is every record of ReadRecords, in seq order.
func (c *Client) ReadAll(ctx context.Context, p SessionReadParams) ([]StoredRecord, error) {
	var out []StoredRecord
	for r, err := range c.ReadRecords(ctx, p) {
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}

// ListSessions iterates over session/list, page by page on nextCursor.
func (c *Client) ListSessions(ctx context.Context, p SessionListParams) iter.Seq2[SessionSummary, error] {
	return func(yield func(SessionSummary, error) bool) {
		for {
			page, err := c.SessionList(ctx, p)
			if err != nil {
				yield(SessionSummary{}, err)
				return
			}
			for _, s := range page.Sessions {
				if !yield(s, nil) {
					return
				}
			}
			if page.NextCursor == nil {
				return
			}
			p.Cursor = Ptr(*page.NextCursor)
		}
	}
}

// SearchHits iterates over session/search, page by page on nextCursor.
func (c *Client) SearchHits(ctx context.Context, p SessionSearchParams) iter.Seq2[SearchHit, error] {
	return func(yield func(SearchHit, error) bool) {
		for {
			page, err := c.SessionSearch(ctx, p)
			if err != nil {
				yield(SearchHit{}, err)
				return
			}
			for _, h := range page.Hits {
				if !yield(h, nil) {
					return
				}
			}
			if page.NextCursor == nil {
				return
			}
			p.Cursor = Ptr(*page.NextCursor)
		}
	}
}

// ReadBlob is the whole content of a blob (ref: a BlobRef's Blob, "sha256:…"), fetched with
// blob/get in chunks of chunk bytes (0: the server's default, 1 MiB).
func (c *Client) ReadBlob(ctx context.Context, sessionID, ref string, chunk int64) ([]byte, error) {
	var out []byte
	for offset := int64(0); ; {
		p := BlobGetParams{SessionID: sessionID, Ref: ref, Offset: Ptr(offset)}
		if chunk > 0 {
			p.Length = Ptr(chunk)
		}
		r, err := c.BlobGet(ctx, p)
		if err != nil {
			return out, err
		}
		b, err := base64.StdEncoding.DecodeString(r.DataBase64)
		if err != nil {
			return out, &Error{Kind: KindDecoding, Method: "blob/get", Message: "dataBase64 is not base64", Err: err}
		}
		out = append(out, b...)
		offset += int64(len(b))
		if r.Eof {
			return out, nil
		}
	}
}
