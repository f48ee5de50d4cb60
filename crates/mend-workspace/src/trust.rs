//! Proof that what is in `.mend/` is mend's own.
//!
//! A repository can ship any file, `.mend/journal.json` included, so mend
//! acts only on what it can authenticate. Each user has a random secret in
//! their state folder (never inside a project); each workspace gets its own
//! key derived from it and the root's canonical path. mend signs its owner
//! mark and every journal with that key (HMAC-SHA256), so a file a
//! repository brought along, or one copied from another project, fails to
//! verify and is never executed.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::error::{Error, Unsealed};

type HmacSha256 = Hmac<Sha256>;

/// The key that signs one workspace's bookkeeping.
#[derive(Clone)]
pub(crate) struct Key([u8; 32]);

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Key(..)")
    }
}

impl Key {
    /// The key of the workspace at `root` (canonical).
    pub(crate) fn for_root(root: &Path) -> Result<Key, Error> {
        let secret = user_secret()?;
        let mut mac = HmacSha256::new_from_slice(&secret).expect("HMAC takes any key length");
        mac.update(b"mend workspace key\0");
        mac.update(root.as_os_str().as_encoded_bytes());
        Ok(Key(mac.finalize().into_bytes().into()))
    }

    /// The key that seals the state files of one `.mend`, named by the
    /// store id its owner mark carries (see `private`). It does not
    /// depend on where the folder is, so a project moved with its `.mend`
    /// keeps its sealed state.
    pub(crate) fn for_store(id: &[u8]) -> Result<Key, Error> {
        let secret = user_secret()?;
        let mut mac = HmacSha256::new_from_slice(&secret).expect("HMAC takes any key length");
        mac.update(b"mend state key\0");
        mac.update(id);
        Ok(Key(mac.finalize().into_bytes().into()))
    }

    fn mac(&self, purpose: &str, body: &[u8]) -> HmacSha256 {
        let mut mac = HmacSha256::new_from_slice(&self.0).expect("HMAC takes any key length");
        mac.update(purpose.as_bytes());
        mac.update(b"\0");
        mac.update(body);
        mac
    }

    /// The tag of `body` for `purpose`, in hex.
    pub(crate) fn sign(&self, purpose: &str, body: &[u8]) -> String {
        hex(&self.mac(purpose, body).finalize().into_bytes())
    }

    /// Whether `tag` (hex) is this key's tag of `body` for `purpose`,
    /// compared in constant time.
    pub(crate) fn verify(&self, purpose: &str, body: &[u8], tag: &str) -> bool {
        let Some(bytes) = unhex(tag.trim()) else {
            return false;
        };
        self.mac(purpose, body).verify_slice(&bytes).is_ok()
    }
}

/// The first line of a sealed state file.
const SEALED: &[u8] = b"mend sealed v1\n";

/// Seals mend's state files (`.mend/turn.json`, a pending session's
/// index, the snapshot state) with the key of the `.mend` they belong
/// to, so a file mend did not write, or one changed since, is told apart
/// from mend's own. Obtained from [`crate::PrivateDir::seal`].
#[derive(Clone)]
pub struct Seal(Key);

impl std::fmt::Debug for Seal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Seal(..)")
    }
}

impl Seal {
    pub(crate) fn new(key: Key) -> Seal {
        Seal(key)
    }

    /// `body` sealed for `purpose` (which names the file, so a sealed file
    /// moved to another name does not verify there): a first line, the
    /// tag, then the body.
    pub fn wrap(&self, purpose: &str, body: &[u8]) -> Vec<u8> {
        let tag = self.0.sign(purpose, body);
        let mut out = Vec::with_capacity(SEALED.len() + tag.len() + 1 + body.len());
        out.extend_from_slice(SEALED);
        out.extend_from_slice(tag.as_bytes());
        out.push(b'\n');
        out.extend_from_slice(body);
        out
    }

    /// The body of `bytes` when [`Seal::wrap`] made them for `purpose`
    /// with this key.
    pub fn open<'a>(&self, purpose: &str, bytes: &'a [u8]) -> Result<&'a [u8], Unsealed> {
        let rest = bytes.strip_prefix(SEALED).ok_or(Unsealed::Missing)?;
        let nl = rest
            .iter()
            .position(|&b| b == b'\n')
            .ok_or(Unsealed::Foreign)?;
        let tag = std::str::from_utf8(&rest[..nl]).map_err(|_| Unsealed::Foreign)?;
        let body = &rest[nl + 1..];
        if self.0.verify(purpose, body, tag) {
            Ok(body)
        } else {
            Err(Unsealed::Foreign)
        }
    }

    /// The raw tag of `parts` for `purpose`: for files sealed piece by
    /// piece (appended blocks, lines), each piece's tag covering the one
    /// before it. Each part is length-prefixed, so parts cannot be
    /// regrouped.
    pub fn tag(&self, purpose: &str, parts: &[&[u8]]) -> [u8; 32] {
        let mut mac = self.0.mac(purpose, b"");
        for p in parts {
            mac.update(&(p.len() as u64).to_le_bytes());
            mac.update(p);
        }
        mac.finalize().into_bytes().into()
    }

    /// Whether `tag` is [`Seal::tag`] of `parts`, compared in constant
    /// time.
    pub fn check(&self, purpose: &str, parts: &[&[u8]], tag: &[u8]) -> bool {
        let mut mac = self.0.mac(purpose, b"");
        for p in parts {
            mac.update(&(p.len() as u64).to_le_bytes());
            mac.update(p);
        }
        mac.verify_slice(tag).is_ok()
    }

    /// [`Seal::tag`] in hex.
    pub fn tag_hex(&self, purpose: &str, parts: &[&[u8]]) -> String {
        hex(&self.tag(purpose, parts))
    }

    /// [`Seal::check`] of a hex tag.
    pub fn check_hex(&self, purpose: &str, parts: &[&[u8]], tag: &str) -> bool {
        unhex(tag.trim()).is_some_and(|t| self.check(purpose, parts, &t))
    }
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub(crate) fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// Where mend keeps per-user state: `MEND_STATE_DIR`, else the platform's
/// state (or local data) folder.
pub(crate) fn state_dir() -> Result<PathBuf, Error> {
    if let Some(d) = std::env::var_os("MEND_STATE_DIR").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(d));
    }
    dirs::state_dir()
        .or_else(dirs::data_local_dir)
        .map(|d| d.join("mend"))
        .ok_or_else(|| {
            Error::io(
                "finding a folder for mend's per-user secret",
                std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "no home folder; set MEND_STATE_DIR to a private folder",
                ),
            )
        })
}

/// The user's secret, made on first use: 32 random bytes, readable by the
/// user only.
fn user_secret() -> Result<[u8; 32], Error> {
    let dir = state_dir()?;
    let path = dir.join("secret");
    if let Some(s) = read_secret(&path)? {
        return Ok(s);
    }
    create_private_dir(&dir)?;
    let mut secret = [0u8; 32];
    getrandom::fill(&mut secret).map_err(|e| {
        Error::io(
            "drawing mend's per-user secret",
            std::io::Error::other(e.to_string()),
        )
    })?;
    // Written aside, then linked into place: linking fails if another
    // process got there first, and then its secret is the one.
    // Unique per attempt: threads of one process may race here too.
    let aside = dir.join(format!("secret.{}.tmp", crate::files::unique()));
    let mut f = private_file(&aside)?;
    f.write_all(&secret)
        .and_then(|()| f.sync_all())
        .map_err(|e| Error::io(format!("writing {}", aside.display()), e))?;
    let linked = fs::hard_link(&aside, &path);
    let _ = fs::remove_file(&aside);
    match linked {
        Ok(()) => Ok(secret),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            read_secret(&path)?.ok_or_else(|| {
                Error::io(
                    format!("reading {}", path.display()),
                    std::io::Error::new(std::io::ErrorKind::InvalidData, "not 32 bytes"),
                )
            })
        }
        Err(e) => Err(Error::io(format!("creating {}", path.display()), e)),
    }
}

/// [`read_secret_now`], kept per process while the file's stat is
/// unchanged: every call of a server reads it (a seal, a store's key), and
/// one `stat` is cheaper than opening and reading it. A secret replaced
/// or removed is read anew.
fn read_secret(path: &Path) -> Result<Option<[u8; 32]>, Error> {
    use std::os::unix::fs::MetadataExt as _;
    type Stamp = (u64, u64, u64, (i64, i64), (i64, i64));
    type Kept = (std::path::PathBuf, Stamp, [u8; 32]);
    static KEPT: std::sync::Mutex<Option<Kept>> = std::sync::Mutex::new(None);
    let Ok(m) = fs::metadata(path) else {
        return read_secret_now(path);
    };
    let stamp = (
        m.dev(),
        m.ino(),
        m.size(),
        (m.mtime(), m.mtime_nsec()),
        (m.ctime(), m.ctime_nsec()),
    );
    let mut kept = KEPT
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((p, st, secret)) = kept.as_ref()
        && p == path
        && *st == stamp
    {
        return Ok(Some(*secret));
    }
    let secret = read_secret_now(path)?;
    *kept = secret.map(|s| (path.to_path_buf(), stamp, s));
    Ok(secret)
}

fn read_secret_now(path: &Path) -> Result<Option<[u8; 32]>, Error> {
    match fs::read(path) {
        Ok(b) => match <[u8; 32]>::try_from(b.as_slice()) {
            Ok(s) => Ok(Some(s)),
            Err(_) => Err(Error::io(
                format!("reading {}", path.display()),
                std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "mend's secret is not 32 bytes; delete it and mend makes a new one",
                ),
            )),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(format!("reading {}", path.display()), e)),
    }
}

#[cfg(unix)]
fn create_private_dir(dir: &Path) -> Result<(), Error> {
    use std::os::unix::fs::DirBuilderExt;
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| Error::io(format!("creating {}", dir.display()), e))
}

#[cfg(not(unix))]
fn create_private_dir(dir: &Path) -> Result<(), Error> {
    fs::create_dir_all(dir).map_err(|e| Error::io(format!("creating {}", dir.display()), e))
}

#[cfg(unix)]
fn private_file(path: &Path) -> Result<fs::File, Error> {
    use std::os::unix::fs::OpenOptionsExt;
    fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| Error::io(format!("creating {}", path.display()), e))
}

#[cfg(not(unix))]
fn private_file(path: &Path) -> Result<fs::File, Error> {
    fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| Error::io(format!("creating {}", path.display()), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The secret kept in memory is read again once the file is replaced
    /// or removed.
    #[test]
    fn a_kept_secret_follows_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("secret");
        std::fs::write(&path, [1u8; 32]).unwrap();
        assert_eq!(read_secret(&path).unwrap(), Some([1; 32]));
        assert_eq!(read_secret(&path).unwrap(), Some([1; 32]));
        // Replaced by a rename (a new inode), then rewritten in place with
        // another size: both are seen.
        let aside = dir.path().join("aside");
        std::fs::write(&aside, [2u8; 32]).unwrap();
        std::fs::rename(&aside, &path).unwrap();
        assert_eq!(read_secret(&path).unwrap(), Some([2; 32]));
        std::fs::write(&path, [3u8; 31]).unwrap();
        assert!(read_secret(&path).is_err());
        std::fs::remove_file(&path).unwrap();
        assert_eq!(read_secret(&path).unwrap(), None);
    }

    #[test]
    fn sealed_files_open_only_for_their_key_and_purpose() {
        let a = Seal(Key([1; 32]));
        let b = Seal(Key([2; 32]));
        let sealed = a.wrap("turn.json", b"{}");
        assert_eq!(a.open("turn.json", &sealed), Ok(&b"{}"[..]));
        assert_eq!(b.open("turn.json", &sealed), Err(Unsealed::Foreign));
        assert_eq!(a.open("index.json", &sealed), Err(Unsealed::Foreign));
        assert_eq!(a.open("turn.json", b"{}"), Err(Unsealed::Missing));
        let mut altered = sealed.clone();
        *altered.last_mut().unwrap() = b']';
        assert_eq!(a.open("turn.json", &altered), Err(Unsealed::Foreign));
        let t = a.tag("blocks", &[b"ab", b"c"]);
        assert!(a.check("blocks", &[b"ab", b"c"], &t));
        assert!(!a.check("blocks", &[b"a", b"bc"], &t));
        assert!(!b.check("blocks", &[b"ab", b"c"], &t));
        assert!(a.check_hex(
            "blocks",
            &[b"ab", b"c"],
            &a.tag_hex("blocks", &[b"ab", b"c"])
        ));
    }

    #[test]
    fn tags_verify_only_for_their_key_purpose_and_body() {
        let a = Key([1; 32]);
        let b = Key([2; 32]);
        let tag = a.sign("journal", b"body");
        assert!(a.verify("journal", b"body", &tag));
        assert!(!b.verify("journal", b"body", &tag));
        assert!(!a.verify("owner", b"body", &tag));
        assert!(!a.verify("journal", b"bodY", &tag));
        assert!(!a.verify("journal", b"body", "zz"));
        assert!(!a.verify("journal", b"body", ""));
    }
}
