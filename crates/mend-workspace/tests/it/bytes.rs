//! The preservation matrix: endings × BOM × final newline × tabs × encoding.
//! An edit of one line leaves every other byte exactly as it was.

use mend_core::{Edit, EditOp, Hints, PlanOptions, Replace, Target, plan_file};
use mend_workspace::{Base, Change, Encoding};

use crate::{put, workspace};

fn encode(text: &str, enc: Encoding) -> Vec<u8> {
    match enc {
        Encoding::Utf8 => text.as_bytes().to_vec(),
        Encoding::Utf16Le => text.encode_utf16().flat_map(u16::to_le_bytes).collect(),
        Encoding::Utf16Be => text.encode_utf16().flat_map(u16::to_be_bytes).collect(),
    }
}

#[test]
fn preservation_matrix() {
    let mut cases = 0;
    for endings in ["lf", "crlf", "mixed"] {
        for bom in [false, true] {
            for final_newline in [false, true] {
                for tabs in [false, true] {
                    for enc in [Encoding::Utf8, Encoding::Utf16Le, Encoding::Utf16Be] {
                        check(endings, bom, final_newline, tabs, enc);
                        cases += 1;
                    }
                }
            }
        }
    }
    assert_eq!(cases, 72);
}

fn check(endings: &str, bom: bool, final_newline: bool, tabs: bool, enc: Encoding) {
    let indent = if tabs { "\t" } else { "    " };
    let lines = [
        "fn main() {".to_owned(),
        format!("{indent}let café = \"naïve\";"),
        format!("{indent}target();"),
        format!("{indent}done();"),
        "}".to_owned(),
    ];
    let ending = |i: usize| match endings {
        "lf" => "\n",
        "crlf" => "\r\n",
        _ => {
            if i.is_multiple_of(2) {
                "\r\n"
            } else {
                "\n"
            }
        }
    };
    // UTF-16 files always carry a BOM; UTF-8 ones only when asked.
    let with_bom = bom || enc != Encoding::Utf8;
    let build = |target: &str| {
        let mut t = String::new();
        if with_bom {
            t.push('\u{feff}');
        }
        for (i, l) in lines.iter().enumerate() {
            t.push_str(if i == 2 { target } else { l });
            if i + 1 < lines.len() || final_newline {
                t.push_str(ending(i));
            }
        }
        t
    };
    let before = build(&lines[2]);
    let after = build(&format!("{indent}changed();"));

    let (dir, ws) = workspace();
    put(dir.path(), "f.rs", encode(&before, enc));
    let snap = ws.read("f.rs").unwrap();
    let file = snap.text().unwrap();
    assert_eq!(file.encoding, enc);
    // The model sends LF and spaces: the file's own bytes must survive.
    let edit = Edit {
        path: "f.rs".into(),
        op: EditOp::Replace(Replace {
            target: Target::Lines {
                search: vec!["    target();".into()],
                replace: vec!["    changed();".into()],
            },
            replace_all: false,
            hints: Hints::default(),
        }),
        origin: None,
    };
    let plan = plan_file(
        "f.rs",
        Some(&file.text),
        &[(0, &edit)],
        &PlanOptions::default(),
    );
    assert!(plan.is_ok(), "{:?}", plan.reports);
    let lock = ws.lock().unwrap();
    ws.commit(
        &lock,
        &[Change::Write {
            path: "f.rs".into(),
            text: plan.content.unwrap(),
            encoding: file.encoding,
            base: Base::Hash(file.hash),
            mode_from: None,
            executable: None,
        }],
    )
    .unwrap();
    let got = std::fs::read(dir.path().join("f.rs")).unwrap();
    assert_eq!(
        got,
        encode(&after, enc),
        "{endings} bom={bom} final_newline={final_newline} tabs={tabs} {enc:?}"
    );
}

#[test]
fn non_utf8_text_is_refused_not_replaced() {
    let (dir, ws) = workspace();
    put(dir.path(), "latin1.txt", b"caf\xe9\n");
    let err = ws.read("latin1.txt").unwrap_err().to_string();
    assert!(err.contains("not UTF-8 or UTF-16"), "{err}");
    put(dir.path(), "img.png", b"\x89PNG\r\n\x1a\n\0\0\0");
    assert!(
        ws.read("img.png")
            .unwrap_err()
            .to_string()
            .contains("binary")
    );
}

#[test]
fn size_limit_is_configurable() {
    let dir = tempfile::tempdir().unwrap();
    let ws = mend_workspace::Workspace::open(
        dir.path(),
        mend_workspace::Options {
            max_bytes: 10,
            ..Default::default()
        },
    )
    .unwrap();
    put(dir.path(), "big.txt", b"0123456789abc\n");
    let err = ws.read("big.txt").unwrap_err().to_string();
    assert!(err.contains("over the 10-byte limit"), "{err}");
}
