//! [`ContentHash`]: the SHA-256 of a file's bytes, the one type every crate
//! uses for a content version.
//!
//! Its wire spelling is `sha256:<64 lowercase hex digits>` (what `mend
//! hash` prints, what `read_file` returns as `version`, what `--expect`
//! and `expected_version` take back). Stores that name files by their
//! content (snapshots, pending blobs, the editor's `disk_sha256`) spell it
//! as bare hex: [`ContentHash::hex`] and the [`bare`] serde module keep
//! those bytes as they were.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sha2::{Digest as _, Sha256};

/// The prefix of a hash's wire spelling.
const PREFIX: &str = "sha256:";

/// The SHA-256 of some bytes (a file's content as it is on disk).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ContentHash([u8; 32]);

/// Why a string is not a content hash.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a content hash: expected `sha256:` and 64 hex digits, as `mend hash` prints")]
pub struct BadHash(pub String);

impl ContentHash {
    /// The hash of `bytes`.
    pub fn of(bytes: &[u8]) -> ContentHash {
        ContentHash(Sha256::digest(bytes).into())
    }

    /// A hash from a finished SHA-256 digest (a file hashed in pieces).
    pub fn from_digest(digest: [u8; 32]) -> ContentHash {
        ContentHash(digest)
    }

    /// The digest's bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// The bare lowercase hex spelling (64 digits), for names in stores
    /// addressed by content.
    pub fn hex(&self) -> String {
        let mut s = String::with_capacity(64);
        for b in self.0 {
            s.push(char::from(HEX[usize::from(b >> 4)]));
            s.push(char::from(HEX[usize::from(b & 0xf)]));
        }
        s
    }

    /// The first `n` hex digits (at most 64): a short id.
    pub fn short(&self, n: usize) -> String {
        let mut hex = self.hex();
        hex.truncate(n);
        hex
    }

    /// Parses the bare hex spelling (64 hex digits, either case).
    pub fn from_hex(hex: &str) -> Result<ContentHash, BadHash> {
        let bad = || BadHash(hex.to_owned());
        if hex.len() != 64 || !hex.is_ascii() {
            return Err(bad());
        }
        let mut out = [0u8; 32];
        for (byte, pair) in out.iter_mut().zip(hex.as_bytes().chunks_exact(2)) {
            let digits = std::str::from_utf8(pair).map_err(|_| bad())?;
            *byte = u8::from_str_radix(digits, 16).map_err(|_| bad())?;
        }
        Ok(ContentHash(out))
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

impl fmt::Display for ContentHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{PREFIX}{}", self.hex())
    }
}

impl fmt::Debug for ContentHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl FromStr for ContentHash {
    type Err = BadHash;

    /// Parses the wire spelling, `sha256:<hex>`.
    fn from_str(s: &str) -> Result<ContentHash, BadHash> {
        let hex = s
            .strip_prefix(PREFIX)
            .ok_or_else(|| BadHash(s.to_owned()))?;
        ContentHash::from_hex(hex).map_err(|_| BadHash(s.to_owned()))
    }
}

impl Serialize for ContentHash {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ContentHash {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ContentHash, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// A string in schemas, as the wire spells it; the same schema a `String`
/// field had, so output schemas stay as clients know them.
impl schemars::JsonSchema for ContentHash {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "String".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        String::json_schema(g)
    }
}

/// Serde for a [`ContentHash`] spelled as bare hex (`#[serde(with =
/// "mend_core::hash::bare")]`), for stores whose files say it that way.
pub mod bare {
    use serde::{Deserialize as _, Deserializer, Serializer};

    use super::ContentHash;

    /// Writes the bare hex.
    pub fn serialize<S: Serializer>(h: &ContentHash, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&h.hex())
    }

    /// Reads bare hex.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<ContentHash, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        ContentHash::from_hex(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_round_trip() {
        let h = ContentHash::of(b"one\n");
        let wire = h.to_string();
        assert_eq!(
            wire,
            "sha256:2c8b08da5ce60398e1f19af0e5dccc744df274b826abe585eaba68c525434806"
        );
        assert_eq!(wire.parse::<ContentHash>(), Ok(h));
        assert_eq!(ContentHash::from_hex(&h.hex()), Ok(h));
        assert_eq!(h.short(12), "2c8b08da5ce6");
        assert_eq!(serde_json::to_string(&h).unwrap(), format!("\"{wire}\""));
        assert_eq!(
            serde_json::from_str::<ContentHash>(&format!("\"{wire}\"")).unwrap(),
            h
        );
    }

    #[test]
    fn anything_else_is_refused() {
        let hex = ContentHash::of(b"").hex();
        for bad in [
            String::new(),
            "absent".to_owned(),
            hex.clone(),
            format!("sha256:{}", &hex[1..]),
            format!("sha256:{hex}0"),
            format!("sha256:{}g", &hex[1..]),
            format!("sha256:{}é", &hex[2..]),
            format!("sha1:{hex}"),
        ] {
            assert!(bad.parse::<ContentHash>().is_err(), "{bad}");
        }
        assert!(ContentHash::from_hex(&format!("sha256:{hex}")).is_err());
    }
}
