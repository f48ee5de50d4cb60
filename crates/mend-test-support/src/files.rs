//! Trees of files: written from a list, read back whole as bytes, copied.

use std::path::Path;

/// Writes `bytes` to `rel` under `dir`, making folders as needed.
pub fn put(dir: &Path, rel: &str, bytes: impl AsRef<[u8]>) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().expect("a path under dir")).unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// A temporary folder holding `files` (path, content), folders made as
/// needed.
pub fn tree<C: AsRef<[u8]>>(files: &[(&str, C)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (rel, bytes) in files {
        put(dir.path(), rel, bytes);
    }
    dir
}

/// Every file under `root` (relative path with `/` separators → bytes),
/// sorted; mend's own `.mend/` bookkeeping is left out.
pub fn read_tree(root: &Path) -> Vec<(String, Vec<u8>)> {
    read_tree_without(root, &[".mend"])
}

/// Every file under `root` (relative path with `/` separators → bytes),
/// sorted, leaving out every entry, at any depth, named one of `skip`. A
/// folder that cannot be read counts as empty.
pub fn read_tree_without(root: &Path, skip: &[&str]) -> Vec<(String, Vec<u8>)> {
    fn walk(base: &Path, dir: &Path, skip: &[&str], out: &mut Vec<(String, Vec<u8>)>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            if skip.iter().any(|s| e.file_name() == *s) {
                continue;
            }
            let p = e.path();
            if p.is_dir() {
                walk(base, &p, skip, out);
            } else {
                let rel = p.strip_prefix(base).unwrap().to_string_lossy();
                out.push((rel.replace('\\', "/"), std::fs::read(&p).unwrap()));
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, skip, &mut out);
    out.sort();
    out
}

/// Copies the files under `from` into `to` (`.mend/` left out, as
/// [`read_tree`] does).
pub fn copy_tree(from: &Path, to: &Path) {
    for (rel, bytes) in read_tree(from) {
        put(to, &rel, bytes);
    }
}
