//! The paging iterators over `session/read`, `session/list` and `session/search`.

use super::common::{spawn, user, TempDir};
use serde_json::json;
use session_sidecar::*;
use std::collections::BTreeSet;

#[test]
fn records_sessions_and_search_hits_page_to_the_end() {
    let dir = TempDir::new();
    let client = spawn(&dir.store(), Framing::Ndjson);
    let sid = client.create(Default::default()).unwrap().session_id;
    for i in 0..25u64 {
        let r = if i % 5 == 0 { Record::event("tick", json!({"i": i})) } else { user(&format!("needle {i}")) };
        client.append(SessionAppendParams::new(&sid, [r])).unwrap();
    }
    let seqs: Vec<u64> = client.records(SessionReadParams::new(&sid).limit(4)).map(|r| r.unwrap().seq()).collect();
    assert_eq!(seqs, (1..=25).collect::<Vec<_>>());
    let events: Vec<u64> = client
        .records(SessionReadParams::new(&sid).limit(2).kinds(["event"]))
        .map(|r| r.unwrap().seq())
        .collect();
    assert_eq!(events, [1, 6, 11, 16, 21]);
    assert_eq!(client.read_all(SessionReadParams::new(&sid).after_seq(20)).unwrap().len(), 5);
    let mut it = client.records(SessionReadParams::new("../bad"));
    assert!(matches!(it.next(), Some(Err(Error::InvalidSessionId(_)))));
    assert!(it.next().is_none(), "an error ends the iterator");

    let mut ids = vec![sid.clone()];
    for _ in 0..4 {
        ids.push(client.create(Default::default()).unwrap().session_id);
    }
    let listed: Vec<String> = client.sessions(SessionListParams::new().limit(2)).map(|s| s.unwrap().session_id).collect();
    assert_eq!(listed.len(), 5);
    assert_eq!(listed.iter().collect::<BTreeSet<_>>(), ids.iter().collect::<BTreeSet<_>>());

    let hits: Vec<SearchHit> = client.search_hits(SessionSearchParams::new("NEEDLE").limit(3)).map(|h| h.unwrap()).collect();
    assert_eq!(hits.len(), 20);
    assert!(hits.iter().all(|h| h.session_id == sid && h.snippet.contains("needle")));
}
