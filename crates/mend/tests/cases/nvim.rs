//! The Neovim plugin's headless tests (`editors/nvim/tests/run.lua`), one
//! test per case, against this build of `mend editor`.
//!
//! Neovim comes from `MEND_NVIM` (`.ci/run` installs it from PyPI), else
//! from `PATH`. Without either, the tests report that they were skipped;
//! with `MEND_NVIM` set, a missing Neovim is a failure.

use std::path::{Path, PathBuf};
use std::process::Command;

use libtest_mimic::{Failed, Trial};

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../editors/nvim/tests/run.lua")
}

fn nvim() -> Result<Option<PathBuf>, String> {
    if let Some(p) = std::env::var_os("MEND_NVIM") {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(Some(p))
        } else {
            Err(format!("MEND_NVIM={} is not a file", p.display()))
        };
    }
    let found = Command::new("nvim").arg("--version").output();
    Ok(found
        .is_ok_and(|o| o.status.success())
        .then(|| PathBuf::from("nvim")))
}

fn run(nvim: &Path, case: &str) -> Result<(), Failed> {
    let out = Command::new(nvim)
        .args(["--clean", "--headless", "-l"])
        .arg(script())
        .arg(case)
        .env("MEND_BIN", env!("CARGO_BIN_EXE_mend"))
        .output()
        .map_err(|e| format!("cannot run {}: {e}", nvim.display()))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{case} failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
        .into())
    }
}

/// One test per case the script lists, each named `nvim::CASE`.
pub fn trials() -> Vec<Trial> {
    match nvim() {
        Err(e) => vec![Trial::test("nvim::neovim", move || Err(e.into()))],
        Ok(None) => vec![Trial::test("nvim::neovim", || Ok(())).with_ignored_flag(true)],
        Ok(Some(nvim)) => {
            let list = Command::new(&nvim)
                .args(["--clean", "--headless", "-l"])
                .arg(script())
                .arg("--list")
                .env("MEND_BIN", env!("CARGO_BIN_EXE_mend"))
                .output()
                .expect("nvim lists the cases");
            String::from_utf8_lossy(&list.stdout)
                .lines()
                .map(|case| {
                    let (nvim, case) = (nvim.clone(), case.to_owned());
                    Trial::test(format!("nvim::{case}"), move || run(&nvim, &case))
                })
                .collect()
        }
    }
}
