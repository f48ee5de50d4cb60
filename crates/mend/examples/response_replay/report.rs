//! The report: markdown tables, the triage of refusals, `--list`,
//! `--show` and the gate.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::outcome::{Kind, Raw};
use crate::reviewed::Entry;
use crate::run::{self, Mode};
use crate::{Half, ModeRun, Outcome, Replayed};

/// Outcome counts of a set of runs.
#[derive(Default, Clone)]
struct Tally(BTreeMap<Outcome, usize>);

impl Tally {
    fn add(&mut self, o: Outcome) {
        *self.0.entry(o).or_default() += 1;
    }
    fn get(&self, o: Outcome) -> usize {
        self.0.get(&o).copied().unwrap_or(0)
    }
    fn total(&self) -> usize {
        self.0.values().sum()
    }
    /// Equal and normalised, and the cases they are counted over (all
    /// but those whose committed result a person found wrong).
    fn share(&self) -> (usize, usize) {
        let good = self.get(Outcome::Equal) + self.get(Outcome::Normalised);
        (good, self.total() - self.get(Outcome::AiderWrong))
    }
    fn rate(&self) -> f64 {
        let (good, of) = self.share();
        100.0 * good as f64 / of.max(1) as f64
    }
    /// `71.4% (25/35)`, with any failing outcome named after it.
    fn cell(&self) -> String {
        let (good, of) = self.share();
        let mut s = format!("{:.1}% ({good}/{of})", self.rate());
        for o in Outcome::ALL.into_iter().filter(|o| o.fails()) {
            if self.get(o) > 0 {
                s.push_str(&format!(", {} {}", self.get(o), o.name().to_uppercase()));
            }
        }
        s
    }
}

fn tally<'a>(runs: impl Iterator<Item = &'a ModeRun>) -> Tally {
    let mut t = Tally::default();
    runs.for_each(|r| t.add(r.outcome));
    t
}

/// The runs in `mode` of the replayed cases `keep` selects.
fn runs_of<'a>(
    replayed: &'a [Replayed<'a>],
    mode: Mode,
    keep: impl Fn(&Replayed<'_>) -> bool + 'a,
) -> impl Iterator<Item = &'a ModeRun> + 'a {
    replayed
        .iter()
        .filter(move |r| keep(r))
        .filter_map(move |r| r.runs.get(&mode))
}

fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::Ok => "ok",
        Kind::RefuseOrUnknown => "refuse_or_unknown",
    }
}

pub(crate) fn report(replayed: &[Replayed<'_>], list: &[Entry], aider_all: bool) {
    let repos: BTreeSet<&str> = replayed.iter().map(|r| r.case.repo.as_str()).collect();
    println!(
        "\n{} responses from {} repositories\n",
        replayed.len(),
        repos.len()
    );
    outcome_table(replayed, |_| true);
    split(replayed);
    by_column(replayed, "model family", |r| r.case.family.clone());
    by_column(replayed, "aider format", |r| r.case.aider_format.clone());
    timing(replayed);
    aider_refused(replayed);
    triage(replayed);
    unmatched(replayed, list);
    if aider_all {
        aider_agreement(replayed);
    }
}

/// Every outcome per kind and mode, with the equal share of `ok` cases.
fn outcome_table(replayed: &[Replayed<'_>], keep: impl Fn(&Replayed<'_>) -> bool + Copy) {
    print!("| kind | mode | cases | equal share |");
    for o in Outcome::ALL {
        print!(" {} |", o.name());
    }
    println!(
        "\n|---|---|---:|---:|{}",
        "---:|".repeat(Outcome::ALL.len())
    );
    for kind in [Kind::Ok, Kind::RefuseOrUnknown] {
        for mode in Mode::ALL {
            let t = tally(runs_of(replayed, mode, move |r| {
                r.case.kind == kind && keep(r)
            }));
            if t.total() == 0 {
                continue;
            }
            let share = if kind == Kind::Ok {
                let (good, of) = t.share();
                format!("**{:.1}%** ({good}/{of})", t.rate())
            } else {
                "n/a".into()
            };
            print!(
                "| {} | {} | {} | {share} |",
                kind_name(kind),
                mode.name(),
                t.total()
            );
            for o in Outcome::ALL {
                print!(" {} |", t.get(o));
            }
            println!();
        }
    }
    println!();
}

/// The repositories of each half, and each half's outcomes.
fn split(replayed: &[Replayed<'_>]) {
    for half in Half::ALL {
        let mut repos: BTreeMap<&str, usize> = BTreeMap::new();
        for r in replayed.iter().filter(|r| r.half == half) {
            *repos.entry(r.case.repo.as_str()).or_default() += 1;
        }
        let names: Vec<String> = repos.iter().map(|(r, n)| format!("{r} ({n})")).collect();
        println!(
            "**{} half** ({} repositories, {} responses): {}\n",
            half.name(),
            repos.len(),
            repos.values().sum::<usize>(),
            names.join(", ")
        );
        outcome_table(replayed, move |r| r.half == half);
    }
}

/// The equal share of `ok` cases per value of `key`, in both modes.
fn by_column(replayed: &[Replayed<'_>], title: &str, key: impl Fn(&Replayed<'_>) -> String) {
    let values: BTreeSet<String> = replayed
        .iter()
        .filter(|r| r.case.kind == Kind::Ok)
        .map(&key)
        .collect();
    println!("| {title} | auto | named format |\n|---|---:|---:|");
    for v in values {
        print!("| {v} |");
        for mode in Mode::ALL {
            let t = tally(runs_of(replayed, mode, |r| {
                r.case.kind == Kind::Ok && key(r) == v
            }));
            if t.total() == 0 {
                print!(" n/a |");
            } else {
                print!(" {} |", t.cell());
            }
        }
        println!();
    }
    println!();
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// Wall time per `mend apply` process, per mode.
fn timing(replayed: &[Replayed<'_>]) {
    println!("| mode | calls | median ms | p95 ms | max ms |\n|---|---:|---:|---:|---:|");
    for mode in Mode::ALL {
        let mut ms: Vec<f64> = runs_of(replayed, mode, |_| true)
            .map(|r| r.call.millis)
            .collect();
        ms.sort_by(f64::total_cmp);
        println!(
            "| {} | {} | {:.1} | {:.1} | {:.1} |",
            mode.name(),
            ms.len(),
            percentile(&ms, 50.0),
            percentile(&ms, 95.0),
            ms.last().copied().unwrap_or(0.0)
        );
    }
    println!();
}

/// The outcome of a run, with its verdict's reason or its failure.
fn run_cell(run: Option<&ModeRun>) -> String {
    let Some(run) = run else {
        return "not run".into();
    };
    let detail = match (&run.reason, &run.raw) {
        (Some(reason), _) => reason.clone(),
        (None, Raw::Refused) => run.call.failure.clone(),
        (None, _) => format!("hash {}", run.hash),
    };
    let detail: String = detail.chars().take(90).collect();
    format!("{} ({})", run.outcome.name(), detail.replace('|', "\\|"))
}

/// What aider and mend did with each response aider refused.
fn aider_refused(replayed: &[Replayed<'_>]) {
    let refused: Vec<&Replayed<'_>> = replayed
        .iter()
        .filter(|r| r.case.kind == Kind::RefuseOrUnknown)
        .collect();
    if refused.is_empty() {
        return;
    }
    println!("Responses aider refused: what aider's applier and mend do with them\n");
    println!("| case | format | aider | mend auto | mend named format |\n|---|---|---|---|---|");
    for r in refused {
        let aider = match &r.aider {
            None => "not run".to_owned(),
            Some(a) => {
                let same = r
                    .runs
                    .get(&Mode::Auto)
                    .is_some_and(|m| m.call.exit_ok && m.call.after == a.after);
                let wrote = a.after != r.case.before;
                let mut s = a.status.clone();
                if !a.message.is_empty() {
                    s.push_str(&format!(
                        " ({})",
                        a.message.chars().take(60).collect::<String>()
                    ));
                }
                if wrote {
                    s.push_str(if same {
                        "; wrote what mend auto writes"
                    } else {
                        "; wrote files"
                    });
                }
                s
            }
        };
        println!(
            "| {} | {} | {} | {} | {} |",
            r.case.id,
            r.case.aider_format,
            aider.replace('|', "\\|"),
            run_cell(r.runs.get(&Mode::Auto)),
            run_cell(r.runs.get(&Mode::Named))
        );
    }
    println!();
}

/// A failure's first line with what varies between responses folded
/// away: the path it names, other paths, numbers; its first sentence.
pub(crate) fn triage_key(failure: &str, path: &str) -> String {
    let mut s = if path.is_empty() {
        failure.to_owned()
    } else {
        failure.replace(path, "<path>")
    };
    // The first sentence: a full stop after a word, not in `...`.
    if let Some(i) = s
        .match_indices(". ")
        .map(|(i, _)| i)
        .find(|&i| i > 0 && s.as_bytes()[i - 1] != b'.')
    {
        s.truncate(i + 1);
    }
    let words: Vec<String> = s.split(' ').map(fold_path).collect();
    let mut out = String::new();
    let mut digits = false;
    for c in words.join(" ").chars() {
        if c.is_ascii_digit() {
            if !digits {
                out.push('N');
            }
            digits = true;
        } else {
            digits = false;
            out.push(c);
        }
    }
    out.chars().take(140).collect()
}

/// `<path>` for a word that is a file path (a separator, then a name with
/// an extension), trailing punctuation kept.
fn fold_path(w: &str) -> String {
    let core = w.trim_end_matches([',', ':', ';', '.', ')']);
    let name = core.rsplit(['/', '\\']).next().unwrap_or(core);
    let path = name.len() < core.len() && name.contains('.') && !core.contains('`');
    if path {
        format!("<path>{}", &w[core.len()..])
    } else {
        w.to_owned()
    }
}

/// Refusals of responses aider applied, grouped by mend's message.
fn triage(replayed: &[Replayed<'_>]) {
    let mut groups: BTreeMap<String, [usize; 2]> = BTreeMap::new();
    for r in replayed.iter().filter(|r| r.case.kind == Kind::Ok) {
        for (mi, mode) in Mode::ALL.into_iter().enumerate() {
            if let Some(run) = r.runs.get(&mode)
                && run.outcome == Outcome::Refused
            {
                let key = triage_key(&run.call.failure, &run.call.failure_path);
                groups.entry(key).or_default()[mi] += 1;
            }
        }
    }
    let mut rows: Vec<(String, [usize; 2])> = groups.into_iter().collect();
    rows.sort_by(|a, b| (b.1[0] + b.1[1], b.1[0]).cmp(&(a.1[0] + a.1[1], a.1[0])));
    println!("Triage: refusals of responses aider applied, by mend's first line\n");
    println!("| auto | named format | mend says |\n|---:|---:|---|");
    for (key, [auto, named]) in rows {
        println!("| {auto} | {named} | {} |", key.replace('|', "\\|"));
    }
    println!();
}

/// Reviewed entries no result matched: stale, to be read again.
fn unmatched(replayed: &[Replayed<'_>], list: &[Entry]) {
    let used: BTreeSet<(&str, &str)> = replayed
        .iter()
        .flat_map(|r| {
            r.runs
                .values()
                .map(|m| (r.case.id.as_str(), m.hash.as_str()))
        })
        .collect();
    let ids: BTreeSet<&str> = replayed.iter().map(|r| r.case.id.as_str()).collect();
    let stale: Vec<&Entry> = list
        .iter()
        .filter(|e| {
            ids.contains(e.id.as_str()) && !used.contains(&(e.id.as_str(), e.hash.as_str()))
        })
        .collect();
    if !stale.is_empty() {
        println!("reviewed.txt entries whose result mend no longer gives (read them again):");
        for e in stale {
            println!("  {} {} {}", e.id, e.mode, e.hash);
        }
        println!();
    }
}

/// How often aider's own applier reproduces what aider committed.
fn aider_agreement(replayed: &[Replayed<'_>]) {
    let mut t: BTreeMap<&str, usize> = BTreeMap::new();
    let mut odd = Vec::new();
    for r in replayed.iter().filter(|r| r.case.kind == Kind::Ok) {
        let Some(a) = &r.aider else { continue };
        let blocks = &r.case.blocks;
        let all = r.case.expected.iter().all(|(p, want)| {
            a.after.get(p).is_some_and(|got| {
                crate::outcome::compare(got, want, blocks) != crate::outcome::FileMatch::Differs
            })
        });
        let key = match (a.status.as_str(), all) {
            ("applied", true) => "applied, as committed (normalisation aside)",
            ("applied", false) => "applied, differs from what was committed",
            (_, true) => "refused, yet the files are as committed",
            _ => "refused",
        };
        *t.entry(key).or_default() += 1;
        if !(a.status == "applied" && all) {
            odd.push(format!("  {} ({key}: {})", r.case.id, a.message));
        }
    }
    println!("aider's applier on the responses aider applied:\n");
    println!("| result | cases |\n|---|---:|");
    for (k, n) in t {
        println!("| {k} | {n} |");
    }
    println!("\n{}\n", odd.join("\n"));
}

/// What a raw outcome names: the file it is about.
fn detail(raw: &Raw) -> &str {
    match raw {
        Raw::Wrong { path } | Raw::Broken { path } | Raw::RefusedButWrote { path } => path,
        _ => "",
    }
}

/// Every run that is not equal, one a line.
pub(crate) fn list(replayed: &[Replayed<'_>]) {
    println!("Runs that are not equal:\n");
    for r in replayed {
        for run in r.runs.values() {
            if run.outcome == Outcome::Equal {
                continue;
            }
            let exit = run.call.code.map_or("signal".into(), |c| c.to_string());
            println!(
                "{}  {}  {}  exit {exit}  {}  {}  {}",
                r.case.id,
                run.format,
                run.hash,
                run.outcome.name(),
                detail(&run.raw),
                run.call.failure
            );
        }
    }
    println!();
}

/// One case in full: the response, mend's output in each mode, and the
/// difference between each result and what aider committed.
pub(crate) fn show(mend: &Path, state: &Path, r: &Replayed<'_>) {
    let c = r.case;
    println!(
        "{} ({}; {}, {} via aider {}; {} half)\n",
        c.id,
        kind_name(c.kind),
        c.repo,
        c.model,
        c.aider_format,
        r.half.name()
    );
    let response = std::fs::read(c.response_path()).unwrap_or_default();
    println!(
        "===== response.md\n{}\n=====\n",
        String::from_utf8_lossy(&response)
    );
    for (mode, run) in &r.runs {
        println!(
            "===== mend apply --format {} ({}): {}, result hash {}",
            run.format,
            mode.name(),
            run.outcome.name(),
            run.hash
        );
        if let Some(reason) = &run.reason {
            println!("reviewed: {reason}");
        }
        println!("{}", run::text_report(mend, state, c, run.format));
        println!("----- mend's result against what aider committed");
        print!("{}", tree_diff(&run.call.after, &c.expected, &c.before));
        println!(
            "----- a reviewed.txt entry for this result:\n{} {} {} VERDICT REASON\n",
            c.id, run.format, run.hash
        );
    }
    if let Some(a) = &r.aider {
        println!("===== aider's applier: {} {}", a.status, a.message);
        println!("----- aider's result against mend's (auto)");
        if let Some(run) = r.runs.get(&Mode::Auto) {
            print!("{}", tree_diff(&run.call.after, &a.after, &c.before));
        }
    }
}

/// A unified diff from `got` to `want` over the files either holds that
/// differ, `before`'s files included.
fn tree_diff(
    got: &crate::outcome::Tree,
    want: &crate::outcome::Tree,
    before: &crate::outcome::Tree,
) -> String {
    let paths: BTreeSet<&String> = got.keys().chain(want.keys()).chain(before.keys()).collect();
    let mut out = String::new();
    for p in paths {
        let (g, w) = (got.get(p), want.get(p));
        if g == w {
            continue;
        }
        let text = |b: Option<&Vec<u8>>| b.map(|b| String::from_utf8_lossy(b).into_owned());
        let (gt, wt) = (text(g), text(w));
        let d = mend_core::diff::unified(
            gt.as_ref().map(|_| p.as_str()),
            wt.as_ref().map(|_| p.as_str()),
            gt.as_deref().unwrap_or_default(),
            wt.as_deref().unwrap_or_default(),
        );
        if d.is_empty() {
            out.push_str(&format!("{p}: differs only in bytes a line diff does not show (line endings, final newline)\n"));
        } else {
            out.push_str(&d);
        }
    }
    if out.is_empty() {
        out.push_str("(identical)\n");
    }
    out
}

/// What `--check` fails on.
pub(crate) fn check(replayed: &[Replayed<'_>], floor: f64) -> Vec<String> {
    let mut failing = Vec::new();
    for r in replayed {
        for run in r.runs.values() {
            if run.outcome.fails() {
                failing.push(format!(
                    "{} ({}, {} half): {} {} {}",
                    r.case.id,
                    run.format,
                    r.half.name(),
                    run.outcome.name(),
                    run.reason.as_deref().unwrap_or(detail(&run.raw)),
                    run.call.failure
                ));
            }
        }
    }
    for mode in Mode::ALL {
        let t = tally(runs_of(replayed, mode, |r| r.case.kind == Kind::Ok));
        if t.total() > 0 && t.rate() < floor {
            failing.push(format!(
                "{}: equal share {} is under the floor {floor}%",
                mode.name(),
                t.cell()
            ));
        }
    }
    failing
}

#[cfg(test)]
mod tests {
    use super::triage_key;

    #[test]
    fn triage_folds_paths_and_numbers() {
        assert_eq!(
            triage_key(
                "src\\app.py: backslashes are not path separators here; use `/`",
                "src\\app.py"
            ),
            "<path>: backslashes are not path separators here; use `/`"
        );
        assert_eq!(
            triage_key(
                "The search matches 2 places in lib/a.py (pass: exact): lines 31 and 138",
                "lib/a.py"
            ),
            "The search matches N places in <path> (pass: exact): lines N and N"
        );
        assert_eq!(
            triage_key(
                "The search was not found in a.py. The closest region is similar",
                "a.py"
            ),
            "The search was not found in <path>."
        );
        assert_eq!(
            triage_key(
                "no edits found: the input has no SEARCH/REPLACE block (old_string/new_string)",
                ""
            ),
            "no edits found: the input has no SEARCH/REPLACE block (old_string/new_string)"
        );
        assert_eq!(
            triage_key("/mount/src/app.py: an absolute path", "x.py"),
            "<path>: an absolute path"
        );
        assert_eq!(
            triage_key("the marker `/* Existing styles... */` and more. Then", ""),
            "the marker `/* Existing styles... */` and more."
        );
    }
}
