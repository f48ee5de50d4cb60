//! Model responses the tests send, written once.

/// A SEARCH/REPLACE block for `path`: `search`'s lines become `replace`'s.
pub fn search_replace(path: &str, search: &str, replace: &str) -> String {
    format!("{path}\n<<<<<<< SEARCH\n{search}\n=======\n{replace}\n>>>>>>> REPLACE\n")
}

/// Line `i` of the generated Python-like source the hostile inputs edit:
/// distinct, similar to its neighbours, and about 48 bytes long.
pub fn code_line(i: usize) -> String {
    format!(
        "    value_{i} = compute_{}(items[{i}], {})",
        i % 97,
        i * 7 % 13
    )
}

/// The first `n` lines of [`code_line`], each ending in a newline.
pub fn code_lines(n: usize) -> String {
    let mut s = String::with_capacity(n * 48);
    for i in 0..n {
        s.push_str(&code_line(i));
        s.push('\n');
    }
    s
}

/// `n` lines from line 1000 of [`code_lines`] with every third line changed:
/// a search that nearly matches, so the similarity pass has thousands of
/// anchored places to weigh.
pub fn near_miss_search(n: usize) -> Vec<String> {
    (1000..1000 + n)
        .map(|i| {
            let l = code_line(i);
            if i % 3 == 0 {
                l.replace("items", "things")
            } else {
                l
            }
        })
        .collect()
}

/// Lines `lines` of [`code_lines`] changed so that none is in the file.
pub fn foreign_search(lines: std::ops::Range<usize>) -> Vec<String> {
    lines
        .map(|i| code_line(i).replace("compute", "calc"))
        .collect()
}
