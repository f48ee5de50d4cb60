//! Renames over open buffers through the real watcher: chains within the
//! rename window, a rename followed by a save through a backup, and storms
//! of renames over ten open files. Each buffer must end on the path its
//! file went to (or, its file overwritten, be replaced or told it is
//! deleted), and a write to that path must reach it.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use super::client::Client;
use crate::tree as workspace;

/// One buffer as the editor holds it.
#[derive(Debug)]
struct Buf {
    path: String,
    text: String,
    version: i64,
    alive: bool,
    deleted: bool,
}

/// The editor side: buffers by the id the server gave them.
struct Ed {
    c: Client,
    bufs: BTreeMap<u64, Buf>,
}

impl Ed {
    fn start(dir: &Path, files: &[(&str, String)]) -> Ed {
        let mut ed = Ed {
            c: Client::start(dir),
            bufs: BTreeMap::new(),
        };
        for (path, text) in files {
            let r =
                ed.c.request(
                    "buffer/open",
                    json!({"path": path, "text": text, "version": 1}),
                )
                .unwrap();
            let id = r["buffer"].as_u64().unwrap();
            ed.bufs.insert(
                id,
                Buf {
                    path: (*path).to_owned(),
                    text: text.clone(),
                    version: 1,
                    alive: true,
                    deleted: false,
                },
            );
        }
        ed
    }

    /// Takes notifications until none comes for a while (past the rename
    /// window), applying each as an editor does.
    fn drain(&mut self) {
        while let Some(n) = self.c.notification_within(Duration::from_millis(2500)) {
            let id = n.params["buffer"].as_u64().unwrap();
            let b = self.bufs.get_mut(&id).expect("a buffer the editor opened");
            match n.method.as_str() {
                "buffer/reload" => {
                    assert_eq!(n.params["version"], json!(b.version), "{:#}", n.params);
                    b.text = n.params["text"].as_str().unwrap().to_owned();
                    b.version += 1;
                    b.deleted = false;
                    let report = json!({"path": b.path, "text": b.text, "dirty": false,
                                        "version": b.version, "applied": n.params["seq"]});
                    self.c.request("buffer/changed", report).unwrap();
                }
                "buffer/renamed" => b.path = n.params["to"].as_str().unwrap().to_owned(),
                "buffer/replaced" => b.alive = false,
                "buffer/deleted" => b.deleted = true,
                other => panic!("unexpected {other}: {:#}", n.params),
            }
        }
    }

    fn at(&self, path: &str) -> Option<u64> {
        self.bufs
            .iter()
            .find(|(_, b)| b.alive && b.path == path)
            .map(|(id, _)| *id)
    }

    /// Writes `text` to `path`: exactly the buffer `id` reloads it.
    fn write_reaches(&mut self, dir: &Path, path: &str, id: u64, text: &str) {
        std::fs::write(dir.join(path), text).unwrap();
        let n = self.c.notification().expect("a reload");
        assert_eq!(n.method, "buffer/reload", "{:#}", n.params);
        assert_eq!(
            (n.params["buffer"].as_u64(), n.params["text"].as_str()),
            (Some(id), Some(text)),
            "{:#}",
            n.params
        );
        let b = self.bufs.get_mut(&id).unwrap();
        b.text = text.to_owned();
        b.version += 1;
        let report = json!({"path": b.path, "text": text, "dirty": false,
                            "version": b.version, "applied": n.params["seq"]});
        self.c.request("buffer/changed", report).unwrap();
    }
}

fn mv(dir: &Path, from: &str, to: &str) {
    std::fs::rename(dir.join(from), dir.join(to)).unwrap();
}

/// `mv f g; mv g h` with f and g open: f's buffer follows to h, g's buffer
/// (whose file the first rename overwrote) is not moved onto f's file.
#[test]
fn a_chain_of_renames_moves_the_first_buffer_to_the_end() {
    let files = [("f", "eff\n".to_owned()), ("g", "gee\n".to_owned())];
    let dir = workspace(&[("f", "eff\n"), ("g", "gee\n")]);
    let d = dir.path();
    let mut ed = Ed::start(d, &files);
    let (f, g) = (ed.at("f").unwrap(), ed.at("g").unwrap());
    mv(d, "f", "g");
    mv(d, "g", "h");
    ed.drain();
    assert_eq!(ed.bufs[&f].path, "h", "{:?}", ed.bufs);
    assert_eq!(ed.bufs[&f].text, "eff\n");
    let gb = &ed.bufs[&g];
    assert!(!gb.alive || (gb.path == "g" && gb.deleted), "{gb:?}");
    ed.write_reaches(d, "h", f, "eff 2\n");
}

/// `mv f g`, then another program saves g through a backup (`mv g g~`,
/// write g, remove g~): the buffer ends on g with the saved text.
#[test]
fn a_rename_then_a_backup_save_keeps_the_buffer_on_the_saved_file() {
    let dir = workspace(&[("f", "one\n")]);
    let d = dir.path();
    let mut ed = Ed::start(d, &[("f", "one\n".to_owned())]);
    let f = ed.at("f").unwrap();
    mv(d, "f", "g");
    mv(d, "g", "g~");
    std::fs::write(d.join("g"), "two\n").unwrap();
    std::fs::remove_file(d.join("g~")).unwrap();
    ed.drain();
    assert_eq!(
        (ed.bufs[&f].path.as_str(), ed.bufs[&f].text.as_str()),
        ("g", "two\n")
    );
    ed.write_reaches(d, "g", f, "three\n");
}

/// Storms of 60 renames over ten open files, as fast as the disk takes
/// them, under three seeds: every buffer whose file survives is on its
/// path and takes a write to it; every buffer whose file was overwritten
/// is replaced or told it is deleted, never left on another file.
#[test]
fn storms_of_renames_leave_every_buffer_on_its_file() {
    for seed in [1_u64, 7, 42] {
        storm(seed);
    }
}

fn storm(seed: u64) {
    let names: Vec<String> = (0..10).map(|i| format!("f{i}")).collect();
    let files: Vec<(&str, String)> = names
        .iter()
        .map(|n| (n.as_str(), format!("{n} {seed}\n")))
        .collect();
    let listed: Vec<(&str, &str)> = files.iter().map(|(n, t)| (*n, t.as_str())).collect();
    let dir = workspace(&listed);
    let d = dir.path();
    let mut ed = Ed::start(d, &files);
    // Where each buffer's file is; `None` once overwritten.
    let mut intent: BTreeMap<u64, Option<String>> = names
        .iter()
        .map(|n| (ed.at(n).unwrap(), Some(n.clone())))
        .collect();
    let mut x = seed;
    let mut next = |n: usize| {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        usize::try_from(x >> 33).unwrap() % n
    };
    for _ in 0..60 {
        let (a, b) = (&names[next(10)], &names[next(10)]);
        if a == b || !d.join(a).exists() {
            continue;
        }
        for at in intent.values_mut() {
            if at.as_deref() == Some(b.as_str()) {
                *at = None;
            } else if at.as_deref() == Some(a.as_str()) {
                *at = Some(b.clone());
            }
        }
        mv(d, a, b);
    }
    ed.drain();
    let mut writes = Vec::new();
    for (id, at) in &intent {
        let b = &ed.bufs[id];
        match at {
            Some(p) => {
                assert!(
                    b.alive && b.path == *p,
                    "seed {seed}: buffer {id} {b:?}, file at {p}"
                );
                writes.push((p.clone(), *id));
            }
            None => assert!(
                !b.alive || (b.deleted && !d.join(&b.path).exists()),
                "seed {seed}: buffer {id} {b:?}, its file overwritten"
            ),
        }
    }
    for (p, id) in writes {
        ed.write_reaches(d, &p, id, &format!("{p} written\n"));
    }
    let status = ed.c.request("editor/status", Value::Null).unwrap();
    let open: Vec<&str> = status["buffers"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b["path"].as_str())
        .collect();
    assert!(
        open.iter().all(|p| ed.at(p).is_some()),
        "seed {seed}: {open:?}"
    );
}
