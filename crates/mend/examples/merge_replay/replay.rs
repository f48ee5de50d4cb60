//! The replay: every case in every mode, judged against `merged` and
//! against git.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use crate::cases::Case;
use crate::{Args, Merged, Mode, run};

/// A mode's counts over a set of cases.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Tally {
    pub(crate) cases: usize,
    pub(crate) matched: usize,
    pub(crate) differs: usize,
    pub(crate) conflict: usize,
    /// Cases git leaves in conflict that the mode merges cleanly.
    pub(crate) resolved: usize,
    /// Of those, the ones equal to `merged`.
    pub(crate) resolved_match: usize,
    pub(crate) regressions: usize,
}

/// Regions one resolver settled in one mode.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Regions {
    pub(crate) regions: usize,
    pub(crate) files: usize,
    /// Files holding such a region that match `merged`, and the regions
    /// in them.
    pub(crate) files_match: usize,
    pub(crate) regions_match: usize,
}

/// A resolved case that does not match `merged`.
pub(crate) struct Wrong {
    pub(crate) mode: Mode,
    pub(crate) id: String,
    pub(crate) path: String,
    pub(crate) resolvers: Vec<&'static str>,
    pub(crate) diff: String,
    /// The committed file itself holds git's conflict markers: no merge
    /// tool can match it.
    pub(crate) committed_markers: bool,
}

#[derive(Default)]
pub(crate) struct Replay {
    pub(crate) modes: BTreeMap<Mode, Tally>,
    pub(crate) projects: BTreeMap<(String, Mode), Tally>,
    pub(crate) regions: BTreeMap<(Mode, &'static str), Regions>,
    pub(crate) wrong: Vec<Wrong>,
    pub(crate) regressed: Vec<(Mode, String)>,
    /// Cases where the `git` mode differs from `git merge-file`; `None`
    /// when git is not on PATH.
    pub(crate) git_checked: Option<usize>,
    pub(crate) git_differs: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Match,
    Differs,
    Conflict,
}

fn judge(m: &Merged, merged: &[u8]) -> Outcome {
    if !m.clean {
        Outcome::Conflict
    } else if m.bytes == merged {
        Outcome::Match
    } else {
        Outcome::Differs
    }
}

/// Runs every case in every mode.
pub(crate) fn replay(a: &Args, cases: &[Case]) -> Replay {
    let mut r = Replay::default();
    let git_on_path = Command::new("git").arg("--version").output().is_ok();
    if git_on_path {
        r.git_checked = Some(0);
    }
    for c in cases {
        let git = run(Mode::Git, &c.path, &c.base, &c.ours, &c.theirs);
        if git_on_path {
            *r.git_checked.get_or_insert(0) += 1;
            if git_merge_file(&c.dir).as_deref() != Some(&git.bytes[..]) {
                r.git_differs.push(c.id.clone());
            }
        }
        for mode in Mode::ALL {
            let m = if mode == Mode::Git {
                git.clone()
            } else {
                run(mode, &c.path, &c.base, &c.ours, &c.theirs)
            };
            r.count(a, c, mode, &git, &m);
        }
    }
    r
}

/// `git merge-file -p ours base theirs` in the case's folder.
fn git_merge_file(dir: &Path) -> Option<Vec<u8>> {
    let out = Command::new("git")
        .current_dir(dir)
        .args(["merge-file", "-p", "ours", "base", "theirs"])
        .output()
        .ok()?;
    // The status is the number of conflicts; negative (over 127) is an
    // error.
    match out.status.code() {
        Some(0..=127) => Some(out.stdout),
        _ => None,
    }
}

impl Replay {
    fn count(&mut self, a: &Args, c: &Case, mode: Mode, git: &Merged, m: &Merged) {
        let outcome = judge(m, &c.merged);
        let git_outcome = judge(git, &c.merged);
        let resolved = !git.clean && m.clean;
        let regressed = (git_outcome == Outcome::Match && outcome != Outcome::Match)
            || (git.clean && m.bytes != git.bytes);
        for t in [
            self.modes.entry(mode).or_default(),
            self.projects.entry((c.project.clone(), mode)).or_default(),
        ] {
            t.cases += 1;
            match outcome {
                Outcome::Match => t.matched += 1,
                Outcome::Differs => t.differs += 1,
                Outcome::Conflict => t.conflict += 1,
            }
            t.resolved += usize::from(resolved);
            t.resolved_match += usize::from(resolved && outcome == Outcome::Match);
            t.regressions += usize::from(regressed);
        }
        if regressed {
            self.regressed.push((mode, c.id.clone()));
        }
        let names: BTreeSet<&'static str> = m.resolvers.iter().copied().collect();
        for name in &names {
            let n = m.resolvers.iter().filter(|r| *r == name).count();
            let t = self.regions.entry((mode, name)).or_default();
            t.regions += n;
            t.files += 1;
            if outcome == Outcome::Match {
                t.files_match += 1;
                t.regions_match += n;
            }
        }
        if resolved && outcome != Outcome::Match {
            self.wrong.push(Wrong {
                mode,
                id: c.id.clone(),
                path: c.path.clone(),
                resolvers: names.into_iter().collect(),
                committed_markers: has_markers(&c.merged),
                diff: if a.dump.is_some() {
                    diff(&c.merged, &m.bytes)
                } else {
                    String::new()
                },
            });
        }
    }
}

/// `merged` against the mode's result, unified.
fn diff(merged: &[u8], result: &[u8]) -> String {
    let (old, new) = (
        String::from_utf8_lossy(merged),
        String::from_utf8_lossy(result),
    );
    similar::TextDiff::from_lines(&old, &new)
        .unified_diff()
        .context_radius(4)
        .header("merged", "resolved")
        .to_string()
}

fn pct(n: usize, of: usize) -> String {
    if of == 0 {
        "–".to_owned()
    } else {
        format!("{:.1}%", 100.0 * n as f64 / of as f64)
    }
}

impl Tally {
    /// A table row; `git_conflicts` is how many of these cases git left
    /// in conflict.
    fn row(&self, name: &str, git_conflicts: usize) -> String {
        format!(
            "| {name} | {} ({}) | {} ({}) | {} ({}) | {} ({}) | {} ({}) | {} |",
            self.matched,
            pct(self.matched, self.cases),
            self.differs,
            pct(self.differs, self.cases),
            self.conflict,
            pct(self.conflict, self.cases),
            self.resolved,
            pct(self.resolved, git_conflicts),
            self.resolved_match,
            pct(self.resolved_match, self.resolved),
            self.regressions,
        )
    }
}

const HEADER: &str = "| match | differs | conflict | git conflicts resolved (share) | resolved matching `merged` | regressions |\n|---|---:|---:|---:|---:|---:|---:|";

impl Replay {
    /// The tables, in Markdown, and the wrong resolutions when asked.
    pub(crate) fn report(&self, a: &Args) {
        let cases = self.modes.get(&Mode::Git).map_or(0, |t| t.cases);
        let git_conflicts = self.modes.get(&Mode::Git).map_or(0, |t| t.conflict);
        println!(
            "merge replay: {cases} real merged files, {git_conflicts} of them left in conflict by git\n"
        );
        println!("| mode {HEADER}");
        for (mode, t) in &self.modes {
            println!("{}", t.row(mode.name(), git_conflicts));
        }
        println!("\nper project:\n\n| project / mode {HEADER}");
        for ((project, mode), t) in &self.projects {
            let git = self.projects[&(project.clone(), Mode::Git)].conflict;
            println!("{}", t.row(&format!("{project} / {}", mode.name()), git));
        }
        println!(
            "\nresolved regions:\n\n| mode | resolver | regions | files | files matching `merged` (their regions) |\n|---|---|---:|---:|---:|"
        );
        for ((mode, name), t) in &self.regions {
            println!(
                "| {} | {name} | {} | {} | {} ({}) |",
                mode.name(),
                t.regions,
                t.files,
                t.files_match,
                t.regions_match
            );
        }
        if self.regions.is_empty() {
            println!("| (none) | | | | |");
        }
        match self.git_checked {
            Some(n) => println!(
                "\ngit mode against `git merge-file -p`: {} of {n} equal{}",
                n - self.git_differs.len(),
                if self.git_differs.is_empty() {
                    String::new()
                } else {
                    format!("; DIFFERENT: {}", self.git_differs.join(", "))
                }
            ),
            None => {
                println!("\ngit is not on PATH: the git mode was not compared with git merge-file");
            }
        }
        for (mode, id) in &self.regressed {
            println!("REGRESSION {} {id}", mode.name());
        }
        self.show_wrong(a);
        println!();
    }

    fn show_wrong(&self, a: &Args) {
        if a.show_wrong {
            println!("\nresolved cases that differ from `merged`:");
            for w in &self.wrong {
                println!(
                    "  {} {} ({}) by {}{}",
                    w.mode.name(),
                    w.id,
                    w.path,
                    w.resolvers.join("+"),
                    if w.committed_markers {
                        "; the committed file holds conflict markers"
                    } else {
                        ""
                    }
                );
            }
        }
        let Some(dir) = &a.dump else { return };
        for w in &self.wrong {
            let d = dir.join(w.mode.name().replace('+', "-"));
            let file = d.join(format!("{}.diff", w.id));
            let text = format!(
                "{} {} resolved by {}\n{}",
                w.id,
                w.path,
                w.resolvers.join("+"),
                w.diff
            );
            if let Err(e) = std::fs::create_dir_all(&d).and_then(|()| std::fs::write(&file, text)) {
                eprintln!("merge_replay: cannot write {}: {e}", file.display());
            }
        }
        println!(
            "\n{} wrong resolutions written to {}",
            self.wrong.len(),
            dir.display()
        );
    }

    /// What the gate refuses.
    pub(crate) fn check(&self) -> Vec<String> {
        let mut failing = Vec::new();
        for (mode, t) in &self.modes {
            if t.regressions > 0 {
                failing.push(format!(
                    "replay / {}: {} regressions against git",
                    mode.name(),
                    t.regressions
                ));
            }
            if t.resolved > 0 && t.resolved_match * 10 < t.resolved * 9 {
                failing.push(format!(
                    "replay / {}: resolved conflicts match `merged` {}/{} ({}), under 90%",
                    mode.name(),
                    t.resolved_match,
                    t.resolved,
                    pct(t.resolved_match, t.resolved)
                ));
            }
        }
        if !self.git_differs.is_empty() {
            failing.push(format!(
                "replay / git: differs from git merge-file on {}",
                self.git_differs.join(", ")
            ));
        }
        failing
    }
}

/// Whether `text` has a line that opens and one that closes a git
/// conflict.
fn has_markers(text: &[u8]) -> bool {
    let mut lines = text.split(|&b| b == b'\n');
    let open = lines.clone().any(|l| l.starts_with(b"<<<<<<< "));
    open && lines.any(|l| l.starts_with(b">>>>>>> "))
}
