//! A small xorshift generator for the soaks: they need spread, not
//! quality. Seeded from the clock unless an environment variable names
//! the seed, and printed, so a failure can be replayed.

#![allow(clippy::print_stdout)]

pub(crate) struct Rng(u64);

impl Rng {
    /// Seeded from `var` when it holds a number, else from the clock; the
    /// seed is printed with `name`.
    pub(crate) fn from_env(var: &str, name: &str) -> Rng {
        let seed = std::env::var(var)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(1, |d| d.as_nanos() as u64)
                    | 1
            });
        println!("{name}: seed {seed} ({var} replays it)");
        Rng(seed)
    }

    /// A number below `n` (0 when `n` is 0).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}
