//! Locating a 40-line block in 1k, 10k and 100k-line files.
//!
//! - `exact`: the block as it is in the file (pass 1).
//! - `fuzzy`: the block with small drift on three lines (a renamed local, a
//!   changed comment, a dropped character), found by the similarity pass.
//! - `plan_fuzzy`: the whole planner (locate, re-base, splice) for the fuzzy
//!   block, as `mend apply` runs it.
//!
//! Inputs are built outside the timed loop; each iteration builds its own
//! `Haystack`, as one `mend apply` call does.
//!
//! Run: `cargo bench -p mend-core --bench locate`

use mend_core::locate::{Haystack, LineQuery, LocateOptions, MatchPass, locate};
use mend_core::{Edit, EditOp, Hints, PlanOptions, Replace, Target, plan_file};

fn main() {
    divan::main();
}

/// A code-like file: functions with varied names, statements and
/// literals, sharing boilerplate like real source does.
fn file(lines: usize) -> Vec<String> {
    const WORDS: [&str; 24] = [
        "user", "order", "cache", "token", "price", "queue", "batch", "event", "shard", "limit",
        "route", "claim", "audit", "quota", "draft", "index", "ledger", "cursor", "bucket",
        "report", "signal", "policy", "window", "record",
    ];
    let mut seed: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    let mut out = Vec::with_capacity(lines);
    let mut f = 0;
    while out.len() < lines {
        let (a, b, c) = (WORDS[next(24)], WORDS[next(24)], WORDS[next(24)]);
        out.push(format!(
            "pub fn {a}_{b}_{f}(ctx: &mut Context, {c}: &{}) -> Result<()> {{",
            WORDS[next(24)]
        ));
        out.push(format!(
            "    // Load the {a} for this {b} and check the {c} limit."
        ));
        for _ in 0..3 + next(6) {
            let (x, y, z) = (WORDS[next(24)], WORDS[next(24)], WORDS[next(24)]);
            out.push(match next(5) {
                0 => format!("    let {x} = ctx.{y}.get(&{z}.id).ok_or(Error::Missing(\"{x}\"))?;"),
                1 => format!(
                    "    if {x}.len() > {} {{ ctx.{y}.evict({z}); }}",
                    next(1000)
                ),
                2 => format!("    ctx.metrics.incr(\"{a}.{x}.{y}\");"),
                3 => format!(
                    "    let {x}_{y} = {z}.iter().filter(|v| v.{x} >= {}).count();",
                    next(50)
                ),
                _ => format!("    {x}.push({y}::from({z}.clone()));"),
            });
        }
        out.push("    Ok(())".to_owned());
        out.push("}".to_owned());
        out.push(String::new());
        f += 1;
    }
    out.truncate(lines);
    out
}

fn block(lines: &[String]) -> (Vec<String>, Vec<String>) {
    let start = lines.len() / 2;
    let exact: Vec<String> = lines[start..start + 40].to_vec();
    // Drift on three lines: a dropped `?`, a misspelt local, a reworded
    // comment; none names anything else in the file.
    let mut fuzzy = exact.clone();
    let mut drifted = 0;
    for (i, l) in fuzzy.iter_mut().enumerate() {
        if drifted < 3 && i % 7 == 3 && l.len() > 20 {
            let cut = l.rfind(';').unwrap_or(l.len() - 1);
            l.insert_str(cut, "_x");
            drifted += 1;
        }
    }
    (exact, fuzzy)
}

const SIZES: [usize; 3] = [1_000, 10_000, 100_000];

fn run(lines: &[String], search: &[String]) -> MatchPass {
    let hay = Haystack::new(lines.iter().map(String::as_str).collect());
    let q = LineQuery::new(search, search);
    let m = locate(&hay, &q, &LocateOptions::default()).expect("located");
    m[0].pass
}

#[divan::bench(args = SIZES)]
fn exact(bencher: divan::Bencher<'_, '_>, n: usize) {
    let lines = file(n);
    let (search, _) = block(&lines);
    assert_eq!(run(&lines, &search), MatchPass::Exact);
    bencher.bench(|| run(divan::black_box(&lines), divan::black_box(&search)));
}

#[divan::bench(args = SIZES)]
fn fuzzy(bencher: divan::Bencher<'_, '_>, n: usize) {
    let lines = file(n);
    let (_, search) = block(&lines);
    assert_eq!(run(&lines, &search), MatchPass::Similarity);
    bencher.bench(|| run(divan::black_box(&lines), divan::black_box(&search)));
}

#[divan::bench(args = SIZES)]
fn plan_fuzzy(bencher: divan::Bencher<'_, '_>, n: usize) {
    let lines = file(n);
    let text = lines.join("\n") + "\n";
    let (_, search) = block(&lines);
    let mut replace = search.clone();
    replace[5] = "    let value = 0;".to_owned();
    let edit = Edit {
        path: "f.rs".into(),
        op: EditOp::Replace(Replace {
            target: Target::Lines { search, replace },
            replace_all: false,
            hints: Hints::default(),
        }),
        origin: None,
    };
    let plan = plan_file("f.rs", Some(&text), &[(0, &edit)], &PlanOptions::default());
    assert!(plan.is_ok(), "{:?}", plan.reports);
    bencher.bench(|| {
        plan_file(
            "f.rs",
            Some(divan::black_box(&text)),
            &[(0, &edit)],
            &PlanOptions::default(),
        )
    });
}
