//! A report gathered as its edits are planned, in bounded memory: what
//! the caps show is kept, everything else is counted as it arrives, so a
//! response of a million failing edits never holds a million reports.
//!
//! Reports may arrive in any order (each file's planner finishes its own
//! edits); what is kept is always what the caps show of the reports in
//! input order, so the output is the one the whole list would give.

use std::collections::BTreeMap;

use super::{CAPS, EditReport, FailureKind, Omitted, failure_section};

/// What counting an edit needs of its report.
#[derive(Debug, Clone, Copy)]
pub(super) enum Tally {
    /// Applied or a no-op.
    Ok,
    /// Failed or skipped, with its failure's kind.
    Failed(Option<FailureKind>),
}

impl Tally {
    pub(super) fn of(r: &EditReport) -> Tally {
        if r.is_ok() {
            Tally::Ok
        } else {
            Tally::Failed(r.failure.as_ref().map(|f| f.kind))
        }
    }
}

/// Collects edit reports: the first [`super::Caps::listed_edits`] (by
/// input index) in full, the first failures' retry-context sections up to
/// [`super::Caps::retry_context`] bytes, and counts of the rest.
#[derive(Debug)]
pub struct Collector {
    listed_cap: usize,
    total: usize,
    applied: usize,
    failed: usize,
    /// Reports of fences read as snippets, not edits.
    snippets: usize,
    /// The reports with the smallest indexes seen, at most `listed_cap`.
    listed: BTreeMap<usize, EditReport>,
    /// The reports not listed, counted.
    unlisted: Omitted,
    /// The sections of the failures with the smallest indexes below
    /// `horizon`, while they fit in the cap together (or there is one).
    sections: BTreeMap<usize, (String, Tally)>,
    sections_len: usize,
    /// Failures at or past this index cannot be shown: the failures
    /// before it already fill the retry context.
    horizon: usize,
    /// The failures past `horizon`, counted.
    unshown: Omitted,
    /// The first edits that applied (by input index), for a retry
    /// context after a partial write to name.
    applied_first: std::collections::BTreeSet<usize>,
}

/// The retry context of a response whose fences are all snippets.
pub(super) const ONLY_SNIPPETS: &str = "The response holds no edit: every fence in it under a file's name is an unchanged excerpt of that file, read as a snippet, so no file was changed. To change a file, send SEARCH/REPLACE blocks (the lines as they are in SEARCH, as they should be in REPLACE); to rewrite one, send all of it.\n";

/// How many applied edits a retry context names one by one.
const NAMED_APPLIED: usize = 20;

impl Default for Collector {
    fn default() -> Self {
        Collector::with_listed(CAPS.listed_edits)
    }
}

impl Collector {
    /// A collector that lists at most `cap` reports.
    pub(super) fn with_listed(cap: usize) -> Collector {
        Collector {
            listed_cap: cap,
            total: 0,
            applied: 0,
            failed: 0,
            snippets: 0,
            listed: BTreeMap::new(),
            unlisted: Omitted::default(),
            sections: BTreeMap::new(),
            sections_len: 0,
            horizon: usize::MAX,
            unshown: Omitted::default(),
            applied_first: std::collections::BTreeSet::new(),
        }
    }

    /// Takes in one edit's final report.
    pub fn push(&mut self, r: EditReport) {
        self.observe(&r);
        self.list(r);
    }

    /// Counts `r` and keeps its retry-context section if it can be shown.
    pub(super) fn observe(&mut self, r: &EditReport) {
        self.total += 1;
        self.snippets += usize::from(r.status == super::EditStatus::Snippet);
        if r.is_ok() {
            self.applied += 1;
            self.applied_first.insert(r.index);
            if self.applied_first.len() > NAMED_APPLIED {
                self.applied_first.pop_last();
            }
        } else {
            self.failed += 1;
            self.section(r);
        }
    }

    fn section(&mut self, r: &EditReport) {
        let tally = Tally::of(r);
        if r.index >= self.horizon {
            self.unshown.count(tally);
            return;
        }
        let s = failure_section(r);
        self.sections_len += s.len();
        self.sections.insert(r.index, (s, tally));
        // The last failure kept stops fitting: it and every failure after
        // it are only counted (the first is always shown).
        while self.sections_len > CAPS.retry_context && self.sections.len() > 1 {
            let Some((i, (s, t))) = self.sections.pop_last() else {
                break;
            };
            self.sections_len -= s.len();
            self.horizon = i;
            self.unshown.count(t);
        }
    }

    fn list(&mut self, r: EditReport) {
        let fits = self.listed.len() < self.listed_cap;
        let earlier = self
            .listed
            .last_key_value()
            .is_some_and(|(&i, _)| r.index < i);
        if !fits && !earlier {
            self.unlisted.count(Tally::of(&r));
            return;
        }
        self.listed.insert(r.index, r);
        if !fits && let Some((_, out)) = self.listed.pop_last() {
            self.unlisted.count(Tally::of(&out));
        }
    }

    /// How many reports were pushed.
    pub fn total(&self) -> usize {
        self.total
    }

    /// How many of them applied (or were no-ops).
    pub fn applied(&self) -> usize {
        self.applied
    }

    /// Whether every edit applied (or was a no-op), and the response held
    /// an edit: one whose every fence is a snippet asked for nothing.
    pub fn all_ok(&self) -> bool {
        self.failed == 0 && !self.only_snippets()
    }

    /// Whether every report is of a fence read as a snippet.
    fn only_snippets(&self) -> bool {
        self.total > 0 && self.snippets == self.total
    }

    /// The retry context of the failures (see
    /// [`super::render_retry_context`]) when nothing was written; `None`
    /// when none failed.
    pub fn retry_context(&self) -> Option<String> {
        self.retry_context_after(false)
    }

    /// The retry context of the failures, saying whether the edits that
    /// applied were `written` (a partial apply): then those are named, and
    /// only the failed ones are asked for again.
    pub fn retry_context_after(&self, written: bool) -> Option<String> {
        if self.failed == 0 {
            return self.only_snippets().then(|| ONLY_SNIPPETS.to_owned());
        }
        let mut out = if written && self.applied > 0 {
            let them = match self.failed {
                1 => "the edit below and send only that one",
                _ => "the edits below and send only those",
            };
            match self.applied {
                1 => format!(
                    "{} of {} edits could not be applied. The other edit ({}) was written, so the file already holds it: do not send it again. Fix {them}, against the files as they are now.\n",
                    self.failed,
                    self.total,
                    self.named_applied()
                ),
                n => format!(
                    "{} of {} edits could not be applied. The other {n} edits ({}) were written, so the files already hold them: do not send them again. Fix {them}, against the files as they are now.\n",
                    self.failed,
                    self.total,
                    self.named_applied()
                ),
            }
        } else {
            format!(
                "{} of {} edits could not be applied, so no file was changed. Fix the edits below and send all of the edits again.\n",
                self.failed, self.total
            )
        };
        let mut rest = Omitted::default();
        for (shown, (s, t)) in self.sections.values().enumerate() {
            if rest.edits > 0 || (out.len() + s.len() > CAPS.retry_context && shown > 0) {
                rest.count(*t);
            } else {
                out.push_str(s);
            }
        }
        rest.merge(&self.unshown);
        if rest.edits > 0 {
            out.push_str(&format!(
                "\n## {} more failed edits not shown ({})\nThis context is capped at {} bytes. Fix the edits above; then send the rest again, and mend will explain those that still fail.\n",
                rest.edits,
                rest.describe().trim_start_matches("0 applied, "),
                CAPS.retry_context
            ));
        }
        Some(out)
    }

    /// "#1", "#1, #3 and #4", "#1, #2 and 40 more".
    fn named_applied(&self) -> String {
        let mut named: Vec<String> = self
            .applied_first
            .iter()
            .map(|i| format!("#{}", i + 1))
            .collect();
        let more = self.applied - named.len();
        if more > 0 {
            named.push(format!("{more} more"));
        }
        match named.as_slice() {
            [one] => one.clone(),
            [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
            [] => String::new(),
        }
    }

    /// The listed reports in input order, and the count of the rest when
    /// there are any.
    pub fn into_listed(self) -> (Vec<EditReport>, Option<Omitted>) {
        let omitted = (self.unlisted.edits > 0).then_some(self.unlisted);
        (self.listed.into_values().collect(), omitted)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::report::{EditStatus, Failure};

    fn report(index: usize, kind: Option<FailureKind>, message_len: usize) -> EditReport {
        EditReport {
            index,
            path: format!("f{}.py", index % 3),
            kind: "search/replace block",
            status: if kind.is_some() {
                EditStatus::Failed
            } else {
                EditStatus::Applied
            },
            pass: None,
            lines: None,
            occurrences: 0,
            similarity: None,
            origin: None,
            failure: kind.map(|k| Failure::new(k, "m".repeat(message_len), "fix it")),
            renamed_to: None,
        }
    }

    /// The retry context rendered from the whole list in order, as it was
    /// before reports were collected.
    fn whole(reports: &[EditReport]) -> Option<String> {
        let failed: Vec<&EditReport> = reports.iter().filter(|r| !r.is_ok()).collect();
        if failed.is_empty() {
            return None;
        }
        let mut out = format!(
            "{} of {} edits could not be applied, so no file was changed. Fix the edits below and send all of the edits again.\n",
            failed.len(),
            reports.len()
        );
        for (shown, r) in failed.iter().enumerate() {
            let section = failure_section(r);
            if out.len() + section.len() > CAPS.retry_context && shown > 0 {
                let o = Omitted::of(failed[shown..].iter().copied());
                out.push_str(&format!(
                    "\n## {} more failed edits not shown ({})\nThis context is capped at {} bytes. Fix the edits above; then send the rest again, and mend will explain those that still fail.\n",
                    o.edits,
                    o.describe().trim_start_matches("0 applied, "),
                    CAPS.retry_context
                ));
                break;
            }
            out.push_str(&section);
        }
        Some(out)
    }

    #[test]
    fn after_a_partial_write_only_the_failed_edits_are_asked_for() {
        let mut c = Collector::default();
        for (i, k) in [None, Some(FailureKind::NotFound), None, None]
            .into_iter()
            .enumerate()
        {
            c.push(report(i, k, 5));
        }
        let ctx = c.retry_context_after(true).unwrap();
        assert!(
            ctx.starts_with("1 of 4 edits could not be applied. The other 3 edits (#1, #3 and #4) were written, so the files already hold them: do not send them again. Fix the edit below and send only that one, against the files as they are now.\n"),
            "{ctx}"
        );
        assert!(!ctx.contains("no file was changed"), "{ctx}");
        assert!(
            c.retry_context()
                .unwrap()
                .starts_with("1 of 4 edits could not be applied, so no file was changed.")
        );
        let mut many = Collector::default();
        for i in 0..30 {
            many.push(report(i, (i == 29).then_some(FailureKind::Ambiguous), 5));
        }
        let ctx = many.retry_context_after(true).unwrap();
        assert!(ctx.contains("The other 29 edits (#1, #2, #3, #4, #5, #6, #7, #8, #9, #10, #11, #12, #13, #14, #15, #16, #17, #18, #19, #20 and 9 more) were written"), "{ctx}");
    }

    fn kind() -> impl Strategy<Value = Option<FailureKind>> {
        prop_oneof![
            Just(None),
            Just(Some(FailureKind::NotFound)),
            Just(Some(FailureKind::Ambiguous)),
            Just(Some(FailureKind::PreviousFailed)),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Whatever order the reports arrive in, the collector shows what
        /// the whole list in input order shows, and counts the rest.
        #[test]
        fn collected_in_any_order_equals_the_whole_list(
            spec in prop::collection::vec((kind(), 0usize..30_000), 1..700),
            seed in any::<u64>(),
        ) {
            let reports: Vec<EditReport> = spec
                .iter()
                .enumerate()
                .map(|(i, (k, len))| report(i, *k, *len))
                .collect();
            let mut order: Vec<usize> = (0..reports.len()).collect();
            let mut x = seed | 1;
            for i in (1..order.len()).rev() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                order.swap(i, (x % (i as u64 + 1)) as usize);
            }
            let mut c = Collector::default();
            for &i in &order {
                c.push(reports[i].clone());
            }
            prop_assert_eq!(c.retry_context(), whole(&reports));
            prop_assert_eq!(c.total(), reports.len());
            prop_assert_eq!(c.applied(), reports.iter().filter(|r| r.is_ok()).count());
            let (listed, omitted) = c.into_listed();
            let cap = CAPS.listed_edits;
            prop_assert_eq!(&listed[..], &reports[..reports.len().min(cap)]);
            let expected = (reports.len() > cap).then(|| Omitted::of(&reports[cap..]));
            prop_assert_eq!(omitted, expected);
        }
    }
}
