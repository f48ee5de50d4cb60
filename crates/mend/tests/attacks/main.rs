//! The attack suite: untrusted repositories, hostile paths, special files
//! and a careless or hostile MCP client, each run against the built `mend`
//! in its own sandbox (see `harness`). Every case ends with the same
//! checks: nothing outside the root changed, no `.git` changed, nothing
//! `.mend` held changed, and the CLI and an MCP session still answer.
//!
//! One test per case: `cargo test -p mend --test attacks NAME`.

#[path = "../support/mod.rs"]
mod support;

mod cases;
mod harness;
mod private;

use libtest_mimic::{Arguments, Failed, Trial};

fn main() {
    let args = Arguments::from_args();
    let trials = cases::ALL
        .iter()
        .chain(private::ALL)
        .map(|&(name, case)| {
            Trial::test(name, move || {
                let s = harness::Sandbox::new();
                case(&s).map_err(|e| Failed::from(format!("attack: {e}")))?;
                s.verify()
                    .map_err(|e| Failed::from(format!("afterwards: {e}")))
            })
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
