//! The replay: every case in every mode, judged against `merged` and
//! against git.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use mend_merge::Policy;

use crate::cases::{Case, half};
use crate::{Args, Merged, Mode, run};

/// What a merge made of one case, by the measure of the replay's README.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Clean and byte-equal to `merged`.
    Match,
    /// Clean and not equal, where `merged` has a non-blank line neither
    /// side has: the person wrote more, so the inputs could not determine
    /// the result.
    Undetermined,
    /// Clean and not equal otherwise (blank-line differences included).
    Wrong,
    Conflict,
}

fn judge(m: &Merged, c: &Case, evil: bool) -> Outcome {
    if !m.clean {
        Outcome::Conflict
    } else if m.bytes == c.merged {
        Outcome::Match
    } else if evil {
        Outcome::Undetermined
    } else {
        Outcome::Wrong
    }
}

/// Whether `merged` has a non-blank line (its ending aside) that neither
/// `ours` nor `theirs` has.
fn undetermined(c: &Case) -> bool {
    let lines = |t: &[u8]| -> BTreeSet<Vec<u8>> {
        t.split(|&b| b == b'\n')
            .map(|l| l.strip_suffix(b"\r").unwrap_or(l).to_vec())
            .collect()
    };
    let (ours, theirs) = (lines(&c.ours), lines(&c.theirs));
    lines(&c.merged)
        .iter()
        .any(|l| !l.trim_ascii().is_empty() && !ours.contains(l) && !theirs.contains(l))
}

/// Counts over the git conflicts a mode (or one resolver in it) settled,
/// in a set of cases.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Tally {
    pub(crate) cases: usize,
    /// Cases git leaves in conflict.
    pub(crate) git_conflicts: usize,
    /// Of those, the ones this mode (or resolver) merged cleanly, and how
    /// they came out.
    pub(crate) settled: usize,
    pub(crate) matched: usize,
    pub(crate) undetermined: usize,
    pub(crate) wrong: usize,
    /// Cases git merged to `merged` that the mode does not, or git merged
    /// cleanly where the mode's bytes differ from git's.
    pub(crate) regressions: usize,
}

impl Tally {
    fn add(&mut self, git_conflict: bool, outcome: Option<Outcome>, regressed: bool) {
        self.cases += 1;
        self.git_conflicts += usize::from(git_conflict);
        self.regressions += usize::from(regressed);
        match outcome {
            Some(Outcome::Match) => self.matched += 1,
            Some(Outcome::Undetermined) => self.undetermined += 1,
            Some(Outcome::Wrong) => self.wrong += 1,
            Some(Outcome::Conflict) | None => return,
        }
        self.settled += 1;
    }

    /// The settled cases the inputs determined.
    fn determined(&self) -> usize {
        self.matched + self.wrong
    }
}

/// A settled case that does not match `merged`.
pub(crate) struct Miss {
    pub(crate) mode: Mode,
    pub(crate) id: String,
    pub(crate) path: String,
    pub(crate) outcome: Outcome,
    pub(crate) resolvers: Vec<&'static str>,
    pub(crate) diff: String,
}

#[derive(Default)]
pub(crate) struct Replay {
    /// Per (half or project, mode).
    pub(crate) groups: BTreeMap<(String, Mode), Tally>,
    /// Per (half, mode, resolver): the settled cases in which the resolver
    /// wrote a region.
    pub(crate) resolvers: BTreeMap<(&'static str, Mode, &'static str), Tally>,
    /// git's own outcome on the cases it merges cleanly.
    pub(crate) git_clean: [usize; 3],
    pub(crate) misses: Vec<Miss>,
    pub(crate) regressed: Vec<(Mode, String)>,
    /// Cases where the `git` mode differs from `git merge-file`; `None`
    /// when git is not on PATH.
    pub(crate) git_checked: Option<usize>,
    pub(crate) git_differs: Vec<String>,
}

/// Runs every case in every mode.
pub(crate) fn replay(a: &Args, cases: &[Case]) -> Replay {
    let mut r = Replay::default();
    let git_on_path = Command::new("git").arg("--version").output().is_ok();
    if git_on_path {
        r.git_checked = Some(0);
    }
    for c in cases {
        let evil = undetermined(c);
        let git = run(Mode::Git, &c.path, &c.base, &c.ours, &c.theirs);
        if git_on_path {
            *r.git_checked.get_or_insert(0) += 1;
            if git_merge_file(&c.dir).as_deref() != Some(&git.bytes[..]) {
                r.git_differs.push(c.id.clone());
            }
        }
        match judge(&git, c, evil) {
            Outcome::Match => r.git_clean[0] += 1,
            Outcome::Undetermined => r.git_clean[1] += 1,
            Outcome::Wrong => r.git_clean[2] += 1,
            Outcome::Conflict => {}
        }
        for mode in Mode::ALL {
            let m = if mode == Mode::Git {
                git.clone()
            } else {
                run(mode, &c.path, &c.base, &c.ours, &c.theirs)
            };
            r.count(a, c, evil, mode, (&git, &m));
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
    fn count(&mut self, a: &Args, c: &Case, evil: bool, mode: Mode, (git, m): (&Merged, &Merged)) {
        let outcome = judge(m, c, evil);
        let git_match = git.clean && git.bytes == c.merged;
        let regressed =
            (git_match && outcome != Outcome::Match) || (git.clean && m.bytes != git.bytes);
        let settled = (!git.clean).then_some(outcome);
        let half = half(&c.project);
        for group in [half, "all", c.project.as_str()] {
            let t = self.groups.entry((group.to_owned(), mode)).or_default();
            t.add(!git.clean, settled, regressed);
        }
        if regressed {
            self.regressed.push((mode, c.id.clone()));
        }
        let names: BTreeSet<&'static str> = m.resolvers.iter().copied().collect();
        for name in &names {
            for group in [half, "all"] {
                let t = self.resolvers.entry((group, mode, name)).or_default();
                t.add(!git.clean, settled, regressed);
            }
        }
        if !git.clean && matches!(outcome, Outcome::Wrong | Outcome::Undetermined) {
            self.misses.push(Miss {
                mode,
                id: c.id.clone(),
                path: c.path.clone(),
                outcome,
                resolvers: names.into_iter().collect(),
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
    /// A table row's cells after its names; `git_conflicts` is how many of
    /// the cases git left in conflict.
    fn cells(&self, git_conflicts: usize) -> String {
        format!(
            "{} | {} ({}) | {} | {} | {} | {} | {} |",
            git_conflicts,
            self.settled,
            pct(self.settled, git_conflicts),
            self.matched,
            self.undetermined,
            self.wrong,
            pct(self.matched, self.determined()),
            self.regressions,
        )
    }
}

const HEADER: &str = "git conflicts | settled (share) | match | undetermined | wrong | determined matching | regressions |";

impl Replay {
    fn git_conflicts(&self, group: &str) -> usize {
        self.groups
            .get(&(group.to_owned(), Mode::Git))
            .map_or(0, |t| t.git_conflicts)
    }

    /// The tables, in Markdown, and the settled cases that miss when asked.
    pub(crate) fn report(&self, a: &Args) {
        let all = self.groups.get(&("all".to_owned(), Mode::Git));
        let [m, u, w] = self.git_clean;
        println!(
            "merge replay: {} real merged files ({}), {} of them left in conflict by git; \
             git's clean merges: {m} match, {u} undetermined, {w} wrong\n",
            all.map_or(0, |t| t.cases),
            a.projects,
            self.git_conflicts("all"),
        );
        println!("tune projects: {}\n", crate::cases::TUNE.join(", "));
        println!(
            "| mode | projects | {HEADER}\n|---|---|{}",
            "---:|".repeat(7)
        );
        for half in ["held-out", "tune", "all"] {
            for mode in Mode::ALL.iter().skip(1) {
                if let Some(t) = self.groups.get(&(half.to_owned(), *mode)) {
                    println!(
                        "| {} | {half} | {}",
                        mode.name(),
                        t.cells(self.git_conflicts(half))
                    );
                }
            }
        }
        println!("\nper resolver (the settled cases in which it wrote a region):\n");
        println!(
            "| mode | resolver | projects | {HEADER}\n|---|---|---|{}",
            "---:|".repeat(7)
        );
        for ((half, mode, name), t) in &self.resolvers {
            println!(
                "| {} | {name} | {half} | {}",
                mode.name(),
                t.cells(self.git_conflicts(half))
            );
        }
        println!(
            "\nper project:\n\n| project | mode | {HEADER}\n|---|---|{}",
            "---:|".repeat(7)
        );
        for ((project, mode), t) in &self.groups {
            if *mode != Mode::Git && !["all", "tune", "held-out"].contains(&project.as_str()) {
                let git = self.git_conflicts(project);
                let name = format!("{project} ({})", half(project));
                println!("| {name} | {} | {}", mode.name(), t.cells(git));
            }
        }
        self.report_git();
        self.show_misses(a);
        println!();
    }

    fn report_git(&self) {
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
    }

    fn show_misses(&self, a: &Args) {
        if a.show_wrong {
            println!("\nsettled cases that differ from `merged`:");
            for w in &self.misses {
                println!(
                    "  {} {} ({}) by {}: {:?}",
                    w.mode.name(),
                    w.id,
                    w.path,
                    w.resolvers.join("+"),
                    w.outcome
                );
            }
        }
        let Some(dir) = &a.dump else { return };
        for w in &self.misses {
            let d = dir.join(w.mode.name());
            let file = d.join(format!("{}.diff", w.id));
            let text = format!(
                "{} {} settled by {}: {:?}\n{}",
                w.id,
                w.path,
                w.resolvers.join("+"),
                w.outcome,
                w.diff
            );
            if let Err(e) = std::fs::create_dir_all(&d).and_then(|()| std::fs::write(&file, text)) {
                eprintln!("merge_replay: cannot write {}: {e}", file.display());
            }
        }
        println!(
            "\n{} settled cases that miss written to {}",
            self.misses.len(),
            dir.display()
        );
    }

    /// What the gate refuses: any regression, a `git` mode that is not
    /// git, and a resolver on by default whose determined resolutions on
    /// the held-out projects match under 95% of the time.
    pub(crate) fn check(&self, a: &Args) -> Vec<String> {
        let mut failing = Vec::new();
        for ((group, mode), t) in &self.groups {
            if group == "all" && t.regressions > 0 {
                failing.push(format!(
                    "replay / {}: {} regressions against git",
                    mode.name(),
                    t.regressions
                ));
            }
        }
        if !self.git_differs.is_empty() {
            failing.push(format!(
                "replay / git: differs from git merge-file on {}",
                self.git_differs.join(", ")
            ));
        }
        if Policy::default() == Policy::Safe {
            failing.extend(self.check_default_on(a));
        }
        failing
    }

    /// The resolvers `safe` runs, judged on the held-out projects.
    fn check_default_on(&self, a: &Args) -> Vec<String> {
        let mut failing = Vec::new();
        if !self
            .groups
            .contains_key(&("held-out".to_owned(), Mode::Git))
        {
            failing.push(format!(
                "replay: the resolvers are on by default, and --projects {} leaves out the \
                 held-out projects they are judged on",
                a.projects
            ));
        }
        let safe = self
            .resolvers
            .iter()
            .filter(|((h, m, _), _)| *h == "held-out" && *m == Mode::Safe);
        for ((_, _, name), t) in safe {
            if t.matched * 100 < t.determined() * 95 {
                failing.push(format!(
                    "replay / safe / {name}: on by default, and its determined resolutions on \
                     the held-out projects match {}/{} ({}), under 95%",
                    t.matched,
                    t.determined(),
                    pct(t.matched, t.determined())
                ));
            }
        }
        failing
    }
}
