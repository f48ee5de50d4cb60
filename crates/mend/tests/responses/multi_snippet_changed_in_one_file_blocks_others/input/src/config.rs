//! Loading and validating the daemon's configuration file.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

/// Where the configuration is looked for when `--config` is not given.
pub const DEFAULT_PATH: &str = "/etc/syncd/config.toml";

#[derive(Debug)]
pub enum ConfigError {
    Read(PathBuf, std::io::Error),
    Parse(PathBuf, toml::de::Error),
    Invalid(String),
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::Read(path, e) => write!(f, "cannot read {}: {e}", path.display()),
            ConfigError::Parse(path, e) => write!(f, "{}: {e}", path.display()),
            ConfigError::Invalid(msg) => write!(f, "invalid configuration: {msg}"),
        }
    }
}

impl std::error::Error for ConfigError {}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub listen: String,
    #[serde(default = "default_workers")]
    pub workers: usize,
    #[serde(default)]
    pub retry: Retry,
    #[serde(default)]
    pub targets: BTreeMap<String, Target>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Retry {
    pub attempts: u32,
    pub initial_delay_ms: u64,
    pub max_delay_ms: u64,
}

impl Default for Retry {
    fn default() -> Self {
        Retry {
            attempts: 5,
            initial_delay_ms: 200,
            max_delay_ms: 10_000,
        }
    }
}

impl Retry {
    /// The delay before attempt `n` (0-based), doubling up to the maximum.
    pub fn delay(&self, n: u32) -> Duration {
        let factor = 1u64.checked_shl(n).unwrap_or(u64::MAX);
        let ms = self.initial_delay_ms.saturating_mul(factor);
        Duration::from_millis(ms.min(self.max_delay_ms))
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct Target {
    pub url: String,
    #[serde(default)]
    pub token_env: Option<String>,
    #[serde(default = "default_batch")]
    pub batch: usize,
}

fn default_workers() -> usize {
    4
}

fn default_batch() -> usize {
    500
}

impl Config {
    /// Reads and validates the file at `path`.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ConfigError::Read(path.to_path_buf(), e))?;
        let config: Config =
            toml::from_str(&text).map_err(|e| ConfigError::Parse(path.to_path_buf(), e))?;
        config.validate()?;
        Ok(config)
    }

    fn validate(&self) -> Result<(), ConfigError> {
        if self.workers == 0 {
            return Err(ConfigError::Invalid("workers must be at least 1".into()));
        }
        if self.retry.initial_delay_ms > self.retry.max_delay_ms {
            return Err(ConfigError::Invalid(
                "retry.initial_delay_ms is larger than retry.max_delay_ms".into(),
            ));
        }
        for (name, target) in &self.targets {
            if !target.url.starts_with("https://") && !target.url.starts_with("http://") {
                return Err(ConfigError::Invalid(format!(
                    "target {name}: url must start with http:// or https://"
                )));
            }
            if target.batch == 0 {
                return Err(ConfigError::Invalid(format!("target {name}: batch is 0")));
            }
        }
        Ok(())
    }

    /// The token for `target`, read from the environment variable it names.
    pub fn token(&self, target: &str) -> Option<String> {
        let name = self.targets.get(target)?.token_env.as_ref()?;
        std::env::var(name).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delay_doubles_then_caps() {
        let r = Retry::default();
        assert_eq!(r.delay(0), Duration::from_millis(200));
        assert_eq!(r.delay(1), Duration::from_millis(400));
        assert_eq!(r.delay(10), Duration::from_millis(10_000));
    }

    #[test]
    fn zero_workers_is_invalid() {
        let c: Config = toml::from_str("listen = \"0.0.0.0:9000\"\nworkers = 0\n").unwrap();
        assert!(c.validate().is_err());
    }
}
