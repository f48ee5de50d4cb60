//! The synthetic merge corpus: merges generated from real files, each with
//! its right answer, in the classes people and models produce.
//!
//! A case picks a real file and a spot in it, and gives each side a list of
//! edits (base lines replaced by new ones). An edited line is the real
//! line with its last word renamed; an inserted line is another real line
//! of the file, renamed the same way. The right answer is either a merged
//! text (both sides' edits spliced into the base in the base's order; for a
//! block both sides insert, that block once, at either side's place) or a
//! conflict, where the base cannot fix the order. Generation is seeded per
//! class and case, so each run draws the same corpus from the same files.

use std::collections::{BTreeMap, HashMap};

use proptest::prelude::RngCore;
use proptest::test_runner::{RngAlgorithm, TestRng};

use crate::cases::Source;
use crate::{Args, Mode, run};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Class {
    Adjacent,
    OneLineGap,
    Identical,
    Alternate,
    DeleteBesideEdit,
    InsertBesideEdit,
    BothInsertSamePoint,
    DuplicatedBlock,
    ReplaceSameSpan,
    DeleteVsEdit,
    DeleteBlockVsRewrite,
    SeparatorBesideEdit,
    CoupledNeighbour,
    KeptLineRewritten,
}

impl Class {
    pub(crate) const ALL: [Class; 14] = [
        Class::Adjacent,
        Class::OneLineGap,
        Class::Identical,
        Class::Alternate,
        Class::DeleteBesideEdit,
        Class::InsertBesideEdit,
        Class::BothInsertSamePoint,
        Class::DuplicatedBlock,
        Class::ReplaceSameSpan,
        Class::DeleteVsEdit,
        Class::DeleteBlockVsRewrite,
        Class::SeparatorBesideEdit,
        Class::CoupledNeighbour,
        Class::KeptLineRewritten,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Class::Adjacent => "adjacent",
            Class::OneLineGap => "one-line-gap",
            Class::Identical => "identical",
            Class::Alternate => "alternate",
            Class::DeleteBesideEdit => "delete-beside-edit",
            Class::InsertBesideEdit => "insert-beside-edit",
            Class::BothInsertSamePoint => "both-insert-same-point",
            Class::DuplicatedBlock => "duplicated-block",
            Class::ReplaceSameSpan => "replace-same-span",
            Class::DeleteVsEdit => "delete-vs-edit",
            Class::DeleteBlockVsRewrite => "delete-block-vs-rewrite",
            Class::SeparatorBesideEdit => "separator-beside-edit",
            Class::CoupledNeighbour => "coupled-neighbour",
            Class::KeptLineRewritten => "kept-line-rewritten",
        }
    }

    /// What the class asks of a merge: a merged text, or a conflict.
    fn wants(self) -> &'static str {
        match self {
            Class::BothInsertSamePoint
            | Class::ReplaceSameSpan
            | Class::DeleteVsEdit
            | Class::DeleteBlockVsRewrite
            | Class::SeparatorBesideEdit
            | Class::CoupledNeighbour
            | Class::KeptLineRewritten => "conflict",
            Class::DuplicatedBlock => "merge, block once",
            _ => "merge",
        }
    }
}

/// proptest's seedable ChaCha generator, so the corpus is the same on
/// every machine.
struct Rng(TestRng);

impl Rng {
    fn new(seed: u64) -> Rng {
        let mut bytes = [0u8; 32];
        bytes[..8].copy_from_slice(&seed.to_le_bytes());
        Rng(TestRng::from_seed(RngAlgorithm::ChaCha, &bytes))
    }
    fn next(&mut self) -> u64 {
        self.0.next_u64()
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn coin(&mut self) -> bool {
        self.next() & 1 == 1
    }
}

/// A real file ready to edit: its lines (with endings) and which of them an
/// edit may target (a letter or digit, and no twin in the file, so every
/// diff pairs the lines as the edit meant).
struct File<'a> {
    path: &'a str,
    lines: Vec<&'a str>,
    good: Vec<bool>,
}

fn prepare(sources: &[Source]) -> Vec<File<'_>> {
    sources
        .iter()
        .filter(|s| s.text.ends_with('\n'))
        .filter_map(|s| {
            let lines: Vec<&str> = s.text.split_inclusive('\n').collect();
            let mut count: HashMap<&str, usize> = HashMap::new();
            for l in &lines {
                *count.entry(l).or_default() += 1;
            }
            let good: Vec<bool> = lines
                .iter()
                .map(|l| {
                    count[l] == 1 && l.len() < 200 && l.bytes().any(|b| b.is_ascii_alphanumeric())
                })
                .collect();
            let enough = lines.len() >= 30 && good.iter().filter(|g| **g).count() >= 20;
            enough.then_some(File {
                path: &s.path,
                lines,
                good,
            })
        })
        .collect()
}

/// Base lines `at..at + del` replaced by `add`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Edit {
    at: usize,
    del: usize,
    add: Vec<String>,
}

impl Edit {
    fn new(at: usize, del: usize, add: Vec<String>) -> Edit {
        Edit { at, del, add }
    }
}

/// The base with `edits` (disjoint) spliced in, in base order.
fn apply(lines: &[&str], edits: &[&Edit]) -> String {
    let mut sorted = edits.to_vec();
    sorted.sort_by_key(|e| (e.at, e.del));
    let mut out = String::new();
    let mut at = 0;
    for e in sorted {
        lines[at..e.at].iter().for_each(|l| out.push_str(l));
        e.add.iter().for_each(|l| out.push_str(l));
        at = e.at + e.del;
    }
    lines[at..].iter().for_each(|l| out.push_str(l));
    out
}

/// What a class builder makes: each side's edits, and the right answer:
/// the alternatives a clean merge may equal (as edit lists over the base),
/// or `None` when only a conflict is right.
struct Built {
    ours: Vec<Edit>,
    theirs: Vec<Edit>,
    right: Option<Vec<Vec<Edit>>>,
}

/// Draws spots and new lines in one file.
struct Gen<'f, 'a> {
    file: &'f File<'a>,
    rng: Rng,
    tags: usize,
}

impl Gen<'_, '_> {
    /// A first line `n` such that `n..n + need` can all be targeted, with
    /// two lines to spare at either end of the file.
    fn spot(&mut self, need: usize) -> Option<usize> {
        let len = self.file.lines.len();
        if len < need + 6 {
            return None;
        }
        (0..40).find_map(|_| {
            let n = 2 + self.rng.below(len - need - 4);
            self.file.good[n..n + need].iter().all(|g| *g).then_some(n)
        })
    }

    /// Line `i` with its last word renamed, as a side would edit it.
    fn renamed(&mut self, i: usize, side: &str) -> String {
        self.tags += 1;
        let line = self.file.lines[i];
        let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
        let end = line.bytes().rposition(word).map_or(0, |p| p + 1);
        format!("{}{side}{}{}", &line[..end], self.tags, &line[end..])
    }

    /// Lines `at..at + n` edited by `side`.
    fn edited(&mut self, at: usize, n: usize, side: &str) -> Vec<String> {
        (at..at + n).map(|i| self.renamed(i, side)).collect()
    }

    /// `n` new lines: other lines of the file, renamed.
    fn fresh(&mut self, n: usize, side: &str) -> Vec<String> {
        let len = self.file.lines.len();
        (0..n)
            .map(|_| {
                let i = (0..40)
                    .map(|_| self.rng.below(len))
                    .find(|&i| self.file.good[i])
                    .unwrap_or(0);
                self.renamed(i, side)
            })
            .collect()
    }

    fn edit(&mut self, at: usize, del: usize, side: &str) -> Edit {
        Edit {
            at,
            del,
            add: self.edited(at, del, side),
        }
    }

    fn build(&mut self, class: Class) -> Option<Built> {
        let (a, b) = (1 + self.rng.below(2), 1 + self.rng.below(2));
        match class {
            Class::Identical => self.identical(a),
            Class::DuplicatedBlock => self.duplicated(),
            Class::DeleteBlockVsRewrite
            | Class::SeparatorBesideEdit
            | Class::CoupledNeighbour
            | Class::KeptLineRewritten => {
                let (ours, theirs) = self.tied(class)?;
                Some(Built {
                    ours,
                    theirs,
                    right: None,
                })
            }
            Class::BothInsertSamePoint | Class::ReplaceSameSpan | Class::DeleteVsEdit => {
                let (ours, theirs) = self.clashing(class, a, b)?;
                Some(Built {
                    ours,
                    theirs,
                    right: None,
                })
            }
            _ => {
                let (ours, theirs) = self.disjoint(class, a, b)?;
                let all = ours.iter().chain(&theirs).cloned().collect();
                Some(Built {
                    ours,
                    theirs,
                    right: Some(vec![all]),
                })
            }
        }
    }

    /// Edits of different base lines, whose union the base's order fixes.
    fn disjoint(&mut self, class: Class, a: usize, b: usize) -> Option<(Vec<Edit>, Vec<Edit>)> {
        Some(match class {
            Class::Alternate => {
                let pairs = 2 + self.rng.below(3);
                let n = self.spot(2 * pairs)?;
                let ours = (0..pairs).map(|i| self.edit(n + 2 * i, 1, "Ours"));
                let ours = ours.collect();
                let theirs = (0..pairs).map(|i| self.edit(n + 2 * i + 1, 1, "Theirs"));
                (ours, theirs.collect())
            }
            Class::DeleteBesideEdit => {
                let n = self.spot(a + 1)?;
                let (del, at) = if self.rng.coin() {
                    (n, n + a)
                } else {
                    (n + 1, n)
                };
                (
                    vec![Edit::new(del, a, Vec::new())],
                    vec![self.edit(at, 1, "Theirs")],
                )
            }
            Class::InsertBesideEdit => {
                let n = self.spot(2)?;
                let add = self.fresh(a, "Ours");
                let at = n + usize::from(self.rng.coin());
                (
                    vec![Edit::new(n + 1, 0, add)],
                    vec![self.edit(at, 1, "Theirs")],
                )
            }
            _ => {
                let gap = usize::from(class == Class::OneLineGap);
                let n = self.spot(a + gap + b)?;
                (
                    vec![self.edit(n, a, "Ours")],
                    vec![self.edit(n + a + gap, b, "Theirs")],
                )
            }
        })
    }

    /// Edits that claim the same base line or the same point, where only a
    /// conflict is right.
    fn clashing(&mut self, class: Class, a: usize, b: usize) -> Option<(Vec<Edit>, Vec<Edit>)> {
        let span = 1 + self.rng.below(3);
        Some(match class {
            Class::BothInsertSamePoint => {
                let n = self.spot(1)?;
                let ours = Edit::new(n, 0, self.fresh(a, "Ours"));
                let mut add = self.fresh(b, "Theirs");
                let del = usize::from(self.rng.coin());
                if del == 1 {
                    add.push(self.renamed(n, "Theirs"));
                }
                (vec![ours], vec![Edit::new(n, del, add)])
            }
            Class::ReplaceSameSpan => {
                let n = self.spot(span + 1)?;
                let shift = usize::from(span > 1 && self.rng.coin());
                let extra = usize::from(self.rng.coin());
                let ours = self.edit(n, span, "Ours");
                (
                    vec![ours],
                    vec![self.edit(n + shift, span - shift + extra, "Theirs")],
                )
            }
            _ => {
                let n = self.spot(span)?;
                let inside = n + self.rng.below(span);
                (
                    vec![Edit::new(n, span, Vec::new())],
                    vec![self.edit(inside, 1, "Theirs")],
                )
            }
        })
    }
}

impl Gen<'_, '_> {
    /// Both sides make the same edit; each also edits another line, two
    /// lines away (git merges it) or one line away (git conflicts). (One
    /// side running on from the shared edit into the next line is
    /// `kept-line-rewritten`: a conflict.)
    fn identical(&mut self, a: usize) -> Option<Built> {
        let gap = 1 + self.rng.below(2);
        let n = self.spot(1 + gap + a + gap + 1)?;
        let at = n + 1 + gap;
        let same = self.edit(at, a, "Both");
        let theirs = self.edit(n, 1, "Theirs");
        let ours = self.edit(at + a + gap, 1, "Ours");
        Some(Built {
            right: Some(vec![vec![theirs.clone(), same.clone(), ours.clone()]]),
            ours: vec![same.clone(), ours],
            theirs: vec![theirs, same],
        })
    }

    /// Both sides insert the same block next to their edits of
    /// neighbouring lines (or one side inserts it where the other edits):
    /// right is the block once, at either side's place, or a conflict.
    fn duplicated(&mut self) -> Option<Built> {
        let n = self.spot(2)?;
        let len = 2 + self.rng.below(2);
        let block = self.fresh(len, "Block");
        let (o, t) = (self.renamed(n, "Ours"), self.renamed(n + 1, "Theirs"));
        let after = |line: &String| [vec![line.clone()], block.clone()].concat();
        let before = |line: &String| [block.clone(), vec![line.clone()]].concat();
        let edit = Edit::new;
        let (ours, theirs) = match self.rng.below(4) {
            0 => (edit(n, 1, after(&o)), edit(n + 1, 1, before(&t))),
            1 => (edit(n, 1, after(&o)), edit(n + 1, 1, after(&t))),
            2 => (edit(n, 1, before(&o)), edit(n + 1, 1, before(&t))),
            _ => (edit(n + 1, 0, block.clone()), edit(n + 1, 1, before(&t))),
        };
        let bare = |e: &Edit| {
            let add: Vec<String> = e
                .add
                .iter()
                .filter(|l| !block.contains(l))
                .cloned()
                .collect();
            (e.del > 0 || !add.is_empty()).then(|| edit(e.at, e.del, add))
        };
        let right = vec![
            [Some(ours.clone()), bare(&theirs)]
                .into_iter()
                .flatten()
                .collect(),
            [bare(&ours), Some(theirs.clone())]
                .into_iter()
                .flatten()
                .collect(),
        ];
        Some(Built {
            ours: vec![ours],
            theirs: vec![theirs],
            right: Some(right),
        })
    }
}

impl Gen<'_, '_> {
    /// The shapes resolvers got wrong on real history, where only a
    /// conflict is right:
    /// - `delete-block-vs-rewrite`: both rewrite a line the same way; one
    ///   deletes the lines after it, the other rewrites the first of them;
    /// - `separator-beside-edit`: one side edits a line next to a blank
    ///   one the other deletes, or edits a line and adds a blank one after
    ///   it where the other edits the next line;
    /// - `coupled-neighbour`: one side deletes a line, or renames a word
    ///   found nowhere else in the file, and the other edits the next line
    ///   to use that word; or one side edits a block's header (a line
    ///   ending in `{` or `:`) and the other the first line of its body;
    /// - `kept-line-rewritten`: both make one edit, and one also rewrites
    ///   the next line, which the other kept.
    fn tied(&mut self, class: Class) -> Option<(Vec<Edit>, Vec<Edit>)> {
        match class {
            Class::DeleteBlockVsRewrite => {
                let n = self.spot(3)?;
                let first = self.renamed(n, "Both");
                let second = self.renamed(n + 1, "Theirs");
                Some((
                    vec![Edit::new(n, 3, vec![first.clone()])],
                    vec![Edit::new(n, 2, vec![first, second])],
                ))
            }
            Class::SeparatorBesideEdit => self.separator(),
            Class::CoupledNeighbour => self.coupled(),
            _ => {
                let n = self.spot(2)?;
                let same = self.edit(n, 1, "Both");
                let mut longer = same.clone();
                longer.del += 1;
                longer.add.push(self.renamed(n + 1, "Ours"));
                Some((vec![longer], vec![same]))
            }
        }
    }

    fn separator(&mut self) -> Option<(Vec<Edit>, Vec<Edit>)> {
        if self.rng.coin() {
            // A side edits a line and adds a separator after it, beside
            // the other side's edit of the next line.
            let n = self.spot(2)?;
            let ending = &self.file.lines[n][self.file.lines[n].trim_end().len()..];
            let blank = ending.to_owned();
            let mut ours = self.edit(n, 1, "Ours");
            ours.add.push(blank);
            return Some((vec![ours], vec![self.edit(n + 1, 1, "Theirs")]));
        }
        let lines = &self.file.lines;
        let len = lines.len();
        let start = self.rng.below(len);
        let n = (0..len).map(|k| (start + k) % len).find(|&n| {
            (2..len - 2).contains(&n)
                && lines[n].trim().is_empty()
                && self.file.good[n - 1]
                && self.file.good[n + 1]
        })?;
        let at = if self.rng.coin() { n - 1 } else { n + 1 };
        let edit = self.edit(at, 1, "Ours");
        Some((vec![edit], vec![Edit::new(n, 1, Vec::new())]))
    }

    fn coupled(&mut self) -> Option<(Vec<Edit>, Vec<Edit>)> {
        let n = self.spot(2)?;
        let lines = &self.file.lines;
        let header = lines[n].trim_end().ends_with(['{', ':']);
        let deeper = |l: &str| l.len() - l.trim_start().len();
        if header && deeper(lines[n + 1]) > deeper(lines[n]) && self.rng.coin() {
            return Some((
                vec![self.edit(n, 1, "Ours")],
                vec![self.edit(n + 1, 1, "Theirs")],
            ));
        }
        // A word of line n found on no other line.
        let words = |l: &str| -> Vec<String> {
            l.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .filter(|w| w.chars().any(|c| c.is_ascii_alphabetic()))
                .map(str::to_owned)
                .collect()
        };
        let word = words(lines[n]).into_iter().find(|w| {
            lines
                .iter()
                .enumerate()
                .all(|(k, l)| k == n || !words(l).contains(w))
        })?;
        let ours = if self.rng.coin() {
            Edit::new(n, 1, Vec::new())
        } else {
            Edit::new(n, 1, vec![lines[n].replace(&word, &format!("{word}Ours"))])
        };
        let next = lines[n + 1];
        let body = next.trim_end_matches(['\n', '\r']);
        let use_it = format!("{body} {word}{}", &next[body.len()..]);
        Some((vec![ours], vec![Edit::new(n + 1, 1, vec![use_it])]))
    }
}

/// One generated merge.
struct Case {
    path: String,
    at: usize,
    base: String,
    ours: String,
    theirs: String,
    /// The texts a clean merge may be; `None`: only a conflict is right.
    right: Option<Vec<String>>,
}

/// Case `k` of `class`: its own seed; files are tried in a seeded order
/// until one has a spot the class fits.
fn draw(files: &[File<'_>], class: Class, ci: usize, k: usize, seed: u64) -> Option<Case> {
    let mut rng = Rng::new(seed ^ ((ci as u64) << 32) ^ k as u64);
    for _ in 0..20 {
        let file = files.get(rng.below(files.len()))?;
        let mut g = Gen {
            file,
            rng: Rng::new(rng.next()),
            tags: 0,
        };
        let Some(mut built) = g.build(class) else {
            continue;
        };
        if rng.coin() {
            std::mem::swap(&mut built.ours, &mut built.theirs);
        }
        let text = |edits: &[Edit]| apply(&file.lines, &edits.iter().collect::<Vec<_>>());
        return Some(Case {
            path: file.path.to_owned(),
            at: built
                .ours
                .iter()
                .chain(&built.theirs)
                .map(|e| e.at)
                .min()
                .unwrap_or(0)
                + 1,
            base: file.lines.concat(),
            ours: text(&built.ours),
            theirs: text(&built.theirs),
            right: built
                .right
                .map(|alts| alts.iter().map(|e| text(e)).collect()),
        });
    }
    None
}

#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Counts {
    pub(crate) right: usize,
    pub(crate) conflict: usize,
    pub(crate) wrong: usize,
}

impl Counts {
    fn total(&self) -> usize {
        self.right + self.conflict + self.wrong
    }
    fn cell(&self) -> String {
        format!(
            "{:.1}% ({}/{}/{})",
            100.0 * self.right as f64 / self.total().max(1) as f64,
            self.right,
            self.conflict,
            self.wrong
        )
    }
}

#[derive(Default)]
pub(crate) struct Synthetic {
    pub(crate) counts: BTreeMap<(Class, Mode), Counts>,
    pub(crate) cases: usize,
    pub(crate) files: usize,
    /// The wrong merges: mode, class, file and line.
    pub(crate) wrong: Vec<String>,
}

/// Generates the corpus and merges every case in every mode.
pub(crate) fn synthetic(a: &Args, sources: &[Source]) -> Synthetic {
    let files = prepare(sources);
    let mut s = Synthetic {
        files: files.len(),
        ..Synthetic::default()
    };
    for (ci, &class) in Class::ALL.iter().enumerate() {
        for k in 0..a.per_class {
            let Some(case) = draw(&files, class, ci, k, a.seed) else {
                continue;
            };
            s.cases += 1;
            for mode in Mode::ALL {
                let m = run(
                    mode,
                    &case.path,
                    case.base.as_bytes(),
                    case.ours.as_bytes(),
                    case.theirs.as_bytes(),
                );
                let c = s.counts.entry((class, mode)).or_default();
                let right = match &case.right {
                    None => !m.clean,
                    Some(alts) => m.clean && alts.iter().any(|t| t.as_bytes() == m.bytes),
                };
                if right {
                    c.right += 1;
                } else if !m.clean {
                    c.conflict += 1;
                } else {
                    c.wrong += 1;
                    dump(
                        a,
                        &format!("{}-{}-{k}", mode.name(), class.name()),
                        &case,
                        &m.bytes,
                    );
                    s.wrong.push(format!(
                        "{} / {} at {}:{}",
                        mode.name(),
                        class.name(),
                        case.path,
                        case.at
                    ));
                }
            }
        }
    }
    s
}

/// Writes a wrong merge's inputs and result under `--dump`'s folder.
fn dump(a: &Args, name: &str, case: &Case, result: &[u8]) {
    let Some(dir) = &a.dump else { return };
    let d = dir.join("synthetic").join(name);
    let files = [
        ("base", case.base.as_bytes()),
        ("ours", case.ours.as_bytes()),
        ("theirs", case.theirs.as_bytes()),
        ("result", result),
    ];
    for (f, bytes) in files {
        if let Err(e) = std::fs::create_dir_all(&d).and_then(|()| std::fs::write(d.join(f), bytes))
        {
            eprintln!("merge_replay: cannot write {}: {e}", d.display());
        }
    }
}

impl Synthetic {
    pub(crate) fn report(&self) {
        println!(
            "synthetic merge corpus: {} cases from {} real files; cells: right% (right/conflict/wrong)\n",
            self.cases, self.files
        );
        print!("| class | right answer |");
        Mode::ALL.iter().for_each(|m| print!(" {} |", m.name()));
        println!("\n|---|---|{}", "---:|".repeat(Mode::ALL.len()));
        for class in Class::ALL {
            print!("| {} | {} |", class.name(), class.wants());
            for mode in Mode::ALL {
                let c = self.counts.get(&(class, mode)).copied().unwrap_or_default();
                print!(" {} |", c.cell());
            }
            println!();
        }
        for w in &self.wrong {
            println!("WRONG synthetic {w}");
        }
        println!();
    }

    /// Any wrong merge, or a mode right less often than git on a class.
    pub(crate) fn check(&self) -> Vec<String> {
        let mut failing = Vec::new();
        for class in Class::ALL {
            if !self.counts.contains_key(&(class, Mode::Git)) {
                failing.push(format!(
                    "synthetic / {}: no case could be drawn",
                    class.name()
                ));
            }
        }
        for (&(class, mode), c) in &self.counts {
            let git = self
                .counts
                .get(&(class, Mode::Git))
                .copied()
                .unwrap_or_default();
            if c.wrong > 0 {
                failing.push(format!(
                    "synthetic / {} / {}: {} wrong merges",
                    mode.name(),
                    class.name(),
                    c.wrong
                ));
            }
            if c.right < git.right {
                failing.push(format!(
                    "synthetic / {} / {}: right {} times, git {}",
                    mode.name(),
                    class.name(),
                    c.right,
                    git.right
                ));
            }
        }
        failing
    }
}
