//! Slips: a search or an anchor copied with one or two typing slips in one
//! line applies where it was copied from, and a slip that names something
//! the file has, or that is as close to two places, refuses.

use mend_core::{Edit, EditOp, EditStatus, Hints, PlanOptions, Replace, Target, plan_file};
use proptest::prelude::*;

use crate::support::lines;

fn plan(text: &str, target: Target) -> (EditStatus, Option<String>, String) {
    let e = Edit {
        path: "f.py".into(),
        op: EditOp::Replace(Replace {
            target,
            replace_all: false,
            hints: Hints::default(),
        }),
        origin: None,
    };
    let p = plan_file("f.py", Some(text), &[(0, &e)], &PlanOptions::default());
    let why = p.reports[0]
        .failure
        .as_ref()
        .map(|f| f.message.clone())
        .unwrap_or_default();
    (p.reports[0].status, p.content, why)
}

/// Plans `target` against `file` and checks that it applies, giving `want`.
fn applies(file: &str, target: Target, want: &str) {
    let (st, content, why) = plan(file, target);
    assert_eq!(st, EditStatus::Applied, "{why}");
    assert_eq!(content.as_deref(), Some(want));
}

fn replace(search: &str, replace: &str) -> Target {
    Target::Lines {
        search: lines(search),
        replace: lines(replace),
    }
}

fn region(start: &str, end: &str, content: &str) -> Target {
    Target::Region {
        start: lines(start),
        end: lines(end),
        content: lines(content),
    }
}

/// Two loaders that differ in one word. The search copies the second
/// with a slip in a word and one in a three-letter name of one line;
/// the first loader is a rival within the margin, which only the slip rule
/// lets past, and it once took a single slip in one name of four letters.
const LOADERS: &str = "def load_user(db, key):\n    row = db.fetch(\"users\", key)\n    if row is None:\n        raise KeyError(key)\n    return Record.from_row(row)\n\n\ndef load_group(db, key):\n    row = db.fetch(\"groups\", key)\n    if row is None:\n        raise KeyError(key)\n    return Record.from_row(row)\n";

#[test]
fn two_slips_in_one_line_beside_a_twin_apply_to_the_copied_region() {
    let want = format!(
        "{}        return None\n    return Record.from_row(row)\n",
        &LOADERS[..LOADERS.rfind("        raise").unwrap_or(0)]
    );
    applies(
        LOADERS,
        replace(
            "    row = db.fetch(\"groups\", key)\n    if row is None:\n        riase KeyError(kye)\n    return Record.from_row(row)",
            "    row = db.fetch(\"groups\", key)\n    if row is None:\n        return None\n    return Record.from_row(row)",
        ),
        &want,
    );
}

/// `Nnoe, None`: a token diff lines the file's first `None` up with the
/// search's second and reports a `None` the search lacks; paired by
/// position, it is one slip.
#[test]
fn a_slipped_word_pairs_with_the_word_it_misspells() {
    let file = "def creds(proxy):\n    try:\n        username, password = get_auth(proxy)\n    except KeyError:\n        username, password = None, None\n\n    if username and password:\n        return basic(username, password)\n    return None\n";
    applies(
        file,
        replace(
            "    except KeyError:\n        username, password = Nnoe, None\n\n    if username and password:",
            "    except KeyError:\n        username, password = Nnoe, None\n\n    if username:",
        ),
        &file.replace("if username and password:", "if username:"),
    );
}

/// A slip that turns a word into another word the file uses is not a
/// slip: `key` → `keys` names the file's `keys`.
#[test]
fn a_slip_into_a_name_the_file_uses_refuses() {
    let file = format!("{LOADERS}\n\ndef keys(db):\n    return db.keys()\n");
    let (st, _, _) = plan(
        &file,
        replace(
            "    row = db.fetch(\"groups\", keys)\n    if row is None:\n        raise KeyError(key)\n    return Record.from_row(row)",
            "    row = db.fetch(\"groups\", keys)\n    if row is None:\n        return None\n    return Record.from_row(row)",
        ),
    );
    assert_eq!(st, EditStatus::Failed);
}

/// A removed line with a swap and a dropped letter is three Levenshtein
/// edits but two slips: a diff's `-` line may carry it.
#[test]
fn a_removed_line_two_slips_away_is_removed() {
    let file = "def check(value):\n    if not isinstance(value, int):\n        raise TypeError(\n            \"value must be an int\"\n        )\n    return value\n";
    let diff = "--- a/f.py\n+++ b/f.py\n@@ -2,4 +2,4 @@\n     if not isinstance(value, int):\n-        raie TypEerror(\n+        raise ValueError(\n             \"value must be an int\"\n         )\n";
    let parsed =
        mend_core::formats::parse(diff, mend_core::formats::Format::UnifiedDiff).expect("a diff");
    let edits: Vec<_> = parsed.edits().enumerate().collect();
    let p = plan_file("f.py", Some(file), &edits, &PlanOptions::default());
    assert!(p.is_ok(), "{:?}", p.reports[0].failure);
    assert_eq!(
        p.content.as_deref(),
        Some(
            file.replace("raise TypeError(", "raise ValueError(")
                .as_str()
        )
    );
}

const PANEL: &str = "class Panel:\n    def raise_(self):\n        \"\"\"Move the panel to the top of the stack.\"\"\"\n        self.stack.move(self, 0)\n\n    def lower(self):\n        \"\"\"Move the panel to the bottom of the stack.\"\"\"\n        self.stack.move(self, -1)\n\n    def hide(self):\n        self.visible = False\n";

/// An anchor with a slip in one name matches the one place it was copied
/// from, and content that repeats the slipped line gets the file's line.
#[test]
fn a_slipped_anchor_applies_and_the_slip_is_not_written() {
    let want = PANEL.replace(
        "    def hide(self):\n        self.visible = False\n",
        "    def hide(self):\n        self.visible = False\n        self.stack.remove(self)\n",
    );
    applies(
        PANEL,
        region(
            "    def hide(slef):",
            "        self.visible = False",
            "    def hide(slef):\n        self.visible = False\n        self.stack.remove(self)",
        ),
        &want,
    );
}

/// `botop` is two edits from `top` and from `bottom`: the anchor matches
/// two places but for a slip, with different lines, and names neither.
#[test]
fn a_slipped_anchor_between_twins_refuses_naming_both() {
    let (st, _, why) = plan(
        PANEL,
        region(
            "        \"\"\"Move the panel to the botop of the stack.\"\"\"",
            "",
            "        \"\"\"Move the panel to the far end of the stack.\"\"\"",
        ),
    );
    assert_eq!(st, EditStatus::Failed);
    assert!(why.contains("line 3") && why.contains("line 7"), "{why}");
}

/// A slipped anchor word that the file has elsewhere is another line.
#[test]
fn a_slipped_anchor_naming_a_file_word_refuses() {
    let (st, _, _) = plan(
        PANEL,
        region("    def raise_(stack):", "", "    def raise_(self, to):"),
    );
    assert_eq!(st, EditStatus::Failed);
}

fn slip(word: &str, kind: u8, at: usize) -> String {
    let mut cs: Vec<char> = word.chars().collect();
    let at = at % (cs.len() - 1);
    match kind % 3 {
        0 => cs.swap(at, at + 1),
        1 => {
            cs.remove(at);
        }
        _ => cs.insert(at, cs[at]),
    }
    cs.into_iter().collect()
}

proptest! {
    /// Among functions with distinct names, an anchor naming one with a
    /// slip applies there, or refuses; it never changes another, and the
    /// slip is never written.
    #[test]
    fn a_slipped_anchor_never_lands_elsewhere(
        names in prop::collection::btree_set("[a-z]{4,9}", 3..7),
        pick in 0usize..7,
        (kind, at) in (0u8..3, 0usize..9),
    ) {
        let names: Vec<String> = names.into_iter().collect();
        let target = &names[pick % names.len()];
        let slipped = slip(target, kind, at);
        prop_assume!(!names.contains(&slipped) && slipped != *target);
        let file: String = names
            .iter()
            .map(|n| format!("def {n}(state):\n    return state.{n}\n\n"))
            .collect();
        let start = format!("def {slipped}(state):");
        let content = format!("{start}\n    return state.{target} + 1");
        let (st, out, why) = plan(&file, region(&start, "", &content));
        let near = |n: &String| rapidfuzz::distance::osa::distance(n.chars(), slipped.chars()) <= 2;
        let alone = names.iter().filter(|n| near(n)).count() == 1
            && !["state", "return", "def"].contains(&slipped.as_str());
        if alone {
            prop_assert_eq!(st, EditStatus::Applied, "{}", why);
        }
        if st == EditStatus::Applied {
            let want = file.replace(
                &format!("def {target}(state):\n    return state.{target}\n"),
                &format!("def {target}(state):\n    return state.{target} + 1\n    return state.{target}\n"),
            );
            prop_assert_eq!(out.as_deref(), Some(want.as_str()));
        }
    }
}

/// A slip that leaves its line unpaired (`defl,` is under half like
/// `self,`), in a search that starts with a blank line: the file's
/// `self,` stays after `def __init__(`, where it was. The blank line put
/// back in front once shifted it a line up, a wrong edit.
#[test]
fn an_unpaired_slipped_line_keeps_the_file_line_in_place() {
    let file = "class Command:\n    \"\"\"Run a command.\n\n    :param deprecated: issues a message indicating that\n                       the command is deprecated.\n    \"\"\"\n\n    def __init__(\n        self,\n        name: t.Optional[str],\n        settings: t.Optional[t.Dict[str, t.Any]] = None,\n        callback: t.Optional[t.Callable[..., t.Any]] = None,\n    ) -> None:\n        self.name = name\n";
    let search = "\n    :param deprecated: issues a message indicating that\n                       the command is deprecated.\n    \"\"\"\n\n    def __init__(\n        defl,\n        name: t.Optional[str],\n        settings: t.Optional[t.Dict[str, t.Any]] = None,\n        callback: t.Optional[t.Callable[..., t.Any]] = None,";
    let new = search.replace("t.Dict[", "t.MutableMapping[").replace(
        "deprecated.\n",
        "deprecated.\n\n    .. versionchanged:: 8.0\n",
    );
    let want = file.replace("t.Dict[", "t.MutableMapping[").replace(
        "deprecated.\n",
        "deprecated.\n\n    .. versionchanged:: 8.0\n",
    );
    applies(file, replace(search, &new), &want);
}
