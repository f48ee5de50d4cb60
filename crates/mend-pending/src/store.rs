//! A session on disk: `.mend/pending/<session>/index.json` lists each
//! file's context and output; texts live in `blobs/`, named by the SHA-256
//! of their UTF-8 text, and are checked against the name when read back.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use mend_workspace::Encoding;
use serde::{Deserialize, Serialize};

use crate::error::Error;

/// A text as the session holds it: where its UTF-8 text is, the encoding
/// its file uses, and the SHA-256 of its bytes in that encoding (the
/// workspace's file hash, so it compares with what is on disk).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Text {
    pub(crate) blob: String,
    pub(crate) encoding: Encoding,
    pub(crate) hash: String,
}

/// What the model proposes for a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum Output {
    /// The file's new full content.
    Write { text: Text },
    /// Delete the file.
    Delete,
    /// Move the file to `to`, with this content.
    Rename { to: String, text: Text },
}

/// One file of a session.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub(crate) struct Entry {
    /// The file as the model saw it; `None` when it did not exist.
    pub(crate) context: Option<Text>,
    pub(crate) output: Option<Output>,
}

/// The session's index.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Index {
    pub(crate) files: BTreeMap<String, Entry>,
    /// The retry context of the last proposal that failed.
    pub(crate) retry: Option<String>,
}

/// A session's folder.
pub(crate) struct Store {
    pub(crate) dir: PathBuf,
}

fn io(context: String) -> impl FnOnce(std::io::Error) -> Error {
    move |cause| Error::Io { context, cause }
}

impl Store {
    pub(crate) fn index_path(&self) -> PathBuf {
        self.dir.join("index.json")
    }

    pub(crate) fn load(&self) -> Result<Index, Error> {
        let p = self.index_path();
        match std::fs::read(&p) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| Error::Corrupt {
                what: format!("{} is unreadable ({e})", p.display()),
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Index::default()),
            Err(e) => Err(io(format!("reading {}", p.display()))(e)),
        }
    }

    pub(crate) fn save(&self, index: &Index) -> Result<(), Error> {
        let bytes = serde_json::to_vec_pretty(index).expect("the index serializes");
        mend_workspace::replace_file(&self.index_path(), &bytes)?;
        Ok(())
    }

    /// Stores a text and returns how the index refers to it.
    pub(crate) fn put(&self, text: &str, encoding: Encoding) -> Result<Text, Error> {
        let blob = mend_workspace::hash_bytes(text.as_bytes())
            .trim_start_matches("sha256:")
            .to_owned();
        let dir = self.dir.join("blobs");
        std::fs::create_dir_all(&dir).map_err(io(format!("creating {}", dir.display())))?;
        let path = dir.join(&blob);
        if !path.is_file() {
            mend_workspace::replace_file(&path, text.as_bytes())?;
        }
        let hash = mend_workspace::hash_bytes(&mend_workspace::encode(text, encoding));
        Ok(Text {
            blob,
            encoding,
            hash,
        })
    }

    /// A stored text, checked against its name.
    pub(crate) fn get(&self, text: &Text) -> Result<String, Error> {
        let path = self.dir.join("blobs").join(&text.blob);
        let bytes = std::fs::read(&path).map_err(io(format!("reading {}", path.display())))?;
        let name = mend_workspace::hash_bytes(&bytes);
        if name.trim_start_matches("sha256:") != text.blob {
            return Err(Error::Corrupt {
                what: format!("{} does not hold the text it is named for", path.display()),
            });
        }
        String::from_utf8(bytes).map_err(|_| Error::Corrupt {
            what: format!("{} is not UTF-8", path.display()),
        })
    }
}

/// Whether a session name is safe as one folder name.
pub(crate) fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// The sessions folder of a workspace's private folder.
pub(crate) fn sessions_dir(private: &Path) -> PathBuf {
    private.join("pending")
}
