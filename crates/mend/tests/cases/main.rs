//! The data-driven suites, one test per case, in one binary:
//!
//! - `fixtures::NAME`: the CLI fixtures under `tests/fixtures/` (see
//!   `fixtures.rs`), in the workspace's fixture convention;
//! - `attacks::THREAT::NAME`: the attack suite (see `attacks/mod.rs`);
//! - `nvim::NAME`: the Neovim plugin's headless tests (see `nvim.rs`);
//! - `responses::NAME`: whole model responses under `tests/responses/`
//!   (see `responses.rs`);
//! - `turn::NAME`: turns made of shell commands (see `turn.rs`).
//!
//! `cargo test -p mend --test cases attacks::` runs one suite, and a
//! case's name runs that case.
#![expect(
    unreachable_pub,
    reason = "helpers shared by this target's modules are `pub`; the test layout settles them"
)]

mod attacks;
mod fixtures;
mod nvim;
mod responses;
mod turn;

use libtest_mimic::Arguments;

fn main() {
    let args = Arguments::from_args();
    let mut trials = fixtures::trials();
    trials.extend(attacks::trials());
    trials.extend(nvim::trials());
    trials.extend(responses::trials());
    trials.extend(turn::trials());
    libtest_mimic::run(&args, trials).exit();
}
