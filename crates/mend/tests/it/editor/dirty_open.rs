//! A dirty buffer's open: it derives from the file as it was when the open
//! was answered (or from the `disk` the editor sends), so a write in the
//! moment after the open is merged, never taken as the buffer's base and
//! reverted by the next save.

use std::time::Duration;

use serde_json::json;

use super::client::Client;
use super::{AGENT_C, BASE, BOTH, USER_A, expect};
use crate::tree as workspace;

/// An agent writes the file right after the editor opened a dirty buffer
/// over it, ten times: each write reaches the buffer.
#[test]
fn a_write_right_after_a_dirty_open_is_merged() {
    let names: Vec<String> = (0..10).map(|i| format!("f{i}.rs")).collect();
    let files: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), BASE)).collect();
    let dir = workspace(&files);
    let mut c = Client::start(dir.path());
    for name in &names {
        c.request(
            "buffer/open",
            json!({"path": name, "text": USER_A, "dirty": true, "version": 1}),
        )
        .unwrap();
        std::fs::write(dir.path().join(name), AGENT_C).unwrap();
        let m = expect(&mut c, "buffer/merged");
        assert_eq!(m["path"], name.as_str());
        assert_eq!(m["text"], BOTH, "{name}");
        assert_eq!(m["disk"], AGENT_C, "{name}");
    }
}

/// A server started again: the editor opens its dirty buffer against the
/// text both last agreed on (`disk`), so a write made while no server ran
/// is merged rather than taken as the base.
#[test]
fn a_dirty_open_with_disk_merges_what_the_file_gained_since() {
    let dir = workspace(&[("src/lib.rs", AGENT_C)]);
    let mut c = Client::start(dir.path());
    c.request(
        "buffer/open",
        json!({"path": "src/lib.rs", "text": USER_A, "dirty": true, "version": 7,
               "disk": BASE}),
    )
    .unwrap();
    let m = expect(&mut c, "buffer/merged");
    assert_eq!(m["text"], BOTH);
    assert_eq!(m["version"], 7);
    // A clean buffer is its own base: `disk` says nothing more.
    c.request(
        "buffer/open",
        json!({"path": "other.rs", "text": "", "version": 1, "disk": "x\n"}),
    )
    .unwrap();
    assert!(c.notification_within(Duration::from_millis(300)).is_none());
}
