//! Model responses the tests send, written once.

/// A SEARCH/REPLACE block for `path`: `search`'s lines become `replace`'s.
pub fn search_replace(path: &str, search: &str, replace: &str) -> String {
    format!("{path}\n<<<<<<< SEARCH\n{search}\n=======\n{replace}\n>>>>>>> REPLACE\n")
}
