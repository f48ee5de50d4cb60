//! Instructions that teach a model each format (`mend prompt FORMAT`).
//!
//! Every text ends with the habits that make matching reliable: copy lines
//! exactly, include enough context to be unique, never add line numbers,
//! and elide only where the format allows it.

use super::format::Format;

const HABITS: &str = "\
Habits that make your edits apply on the first try:
- Copy the lines you want to change exactly as they are in the file now,
  including indentation. Re-read the file if you are not sure.
- Include enough unchanged lines around the change that the text occurs only
  once in the file. If it would match in several places, the edit is refused
  and you will be told every line number where it matched.
- Never put line numbers, diff markers or `>` quote marks in front of lines
  you copy from the file.
- Keep each edit small: change the lines that need changing plus a few lines
  of context, not the whole function.
- Edits to one file must not overlap. Two changes close together belong in
  one edit.
";

const NO_ELISION: &str = "\
- Do not shorten copied lines with `...` or comments like
  `// ... existing code ...`: every line you send is matched literally.
";

const SEARCH_REPLACE: &str = "\
Edit files with SEARCH/REPLACE blocks. Each block names one file and one
change:

path/to/file.py
```python
<<<<<<< SEARCH
    def total(self):
        return sum(self.items)
=======
    def total(self):
        return sum(i.price for i in self.items)
>>>>>>> REPLACE
```

- Put the file path alone on the line before the fence.
- The SEARCH part holds the current lines; the REPLACE part holds what they
  become. Several blocks may follow one another in the same fence.
- To create a file, leave the SEARCH part empty and put the whole file in
  the REPLACE part. An empty SEARCH on a file that exists is refused: to
  add lines at its end, put its last lines in SEARCH, and in REPLACE those
  lines followed by the new ones.
- Code you only show, without changing it, needs no path line above its
  fence; a fence under a path line that is not a SEARCH/REPLACE block is
  read as the whole file only when it is the whole file.
- If you know where the lines are, you may add `:start_line:N` and a
  `-------` line right after `<<<<<<< SEARCH`.
- If the file itself contains a line like `=======` or `<<<<<<<`, write it
  with a backslash in front (`\\=======`) so it is not read as a marker.
- You may stand for unchanged lines in the middle of a long SEARCH with a
  comment such as `# ... existing code ...`, and repeat that comment at the
  same place in the REPLACE part: those lines are then kept as they are.
";

const EDIT_BLOCK: &str = "\
Edit files with EDIT blocks:

src/math.py
««« EDIT
def multiply(a, b):
    return a + b
═══════ REPL
def multiply(a, b):
    return a * b
»»» EDIT END

- The line before `««« EDIT` is the file path, alone on its line.
- The EDIT section holds the current lines, the REPL section what they
  become. Start both with the same unchanged lines (the anchor); the lines
  after the anchor are what changes. An anchor with nothing after it in EDIT
  inserts the extra REPL lines after it.
- An empty EDIT section creates the file with the REPL section as content.
- If one block for a file fails, later blocks for that file are not tried.
";

const APPLY_PATCH: &str = "\
Edit files with a patch envelope:

*** Begin Patch
*** Update File: src/app.py
@@ def main():
-    print(\"hello\")
+    print(\"hello, world\")
*** Add File: docs/notes.md
+# Notes
+First line.
*** Delete File: old/unused.py
*** End Patch

- One envelope may hold any number of `*** Add File:`, `*** Update File:`
  (optionally followed by `*** Move to: new/path`) and `*** Delete File:`
  sections.
- In an update, each chunk starts with `@@`, optionally followed by a line
  copied from the file above the change (a function or class header) that
  tells where the chunk is. Then each line starts with a space (unchanged),
  `-` (removed) or `+` (added). Give three unchanged lines before and after
  each change when you can.
- Chunks are applied in order, top to bottom. Put `*** End of File` after a
  chunk that must be at the very end of the file.
- Lines you remove must be copied exactly.
";

const UNIFIED_DIFF: &str = "\
Edit files with unified diffs, as `git diff` prints them:

--- a/src/app.py
+++ b/src/app.py
@@ -10,7 +10,7 @@ def main():
     args = parse()
     if args.verbose:
-        print(\"hello\")
+        print(\"hello, world\")
     run(args)

- Use `--- /dev/null` to create a file and `+++ /dev/null` to delete one.
- Every hunk needs unchanged context lines around its change; lines start
  with a space, `-` or `+`.
- Line numbers in `@@` headers help but need not be exact. The `-` lines must
  be copied exactly: a hunk whose removed lines differ from the file is
  refused.
";

const WHOLE_FILE: &str = "\
Send each changed file whole: its path alone on a line, then a fence with
the entire new content.

src/app.py
```python
import sys


def main():
    print(\"hello, world\")
```

- The fence must hold the complete file, every line of it: it replaces the
  file as it is. The path line is the path alone.
- If the file itself holds ``` fences (a Markdown file, a README), open
  and close the outer fence with four backticks (````) so the file's own
  fences cannot end it.
- Use this for new files and for small files. For a small change in a large
  file, prefer an edit format that names only the changed lines.
";

const STR_REPLACE: &str = "\
Edit files with JSON string replacements:

{\"path\": \"src/app.py\",
 \"old_string\": \"    print(\\\"hello\\\")\\n\",
 \"new_string\": \"    print(\\\"hello, world\\\")\\n\"}

- Send one object, a list of objects, or
  {\"path\": …, \"edits\": [{\"old_string\": …, \"new_string\": …}, …]}.
- `old_string` is copied exactly from the file and must occur exactly once;
  set \"replace_all\": true to replace every occurrence.
- An empty `old_string` creates a new file with `new_string` as its content.
- Run `mend schema` for the JSON Schema.
";

const ANCHORED: &str = "\
Edit files with anchored region changes (JSON):

{\"path\": \"src/main.py\", \"changes\": [
  {\"start\": [\"def hello():\"], \"end\": [\"def goodbye():\"],
   \"content\": [\"def hello(name):\", \"    print(name)\", \"\", \"def goodbye():\"]}
]}

- `start` (1-4 lines) marks where the region begins and `end` (1-4 lines,
  optional) where it ends; both are copied from the file. Without `end`,
  the region is just the `start` lines.
- `content` replaces the whole region, anchors included: repeat an anchor
  in `content` to keep it, leave it out to delete it.
- Prefer unique lines as anchors: signatures, class headers, imports.
- For a new file or a full rewrite send {\"path\": …, \"content\": \"…\"}
  (write_file) instead.
- Run `mend schema` for the JSON Schema.
";

/// The instructions for `format` (for [`Format::Auto`], the SEARCH/REPLACE
/// format, which every model knows).
pub fn prompt(format: Format) -> String {
    let (body, elides) = match format {
        Format::EditBlock => (EDIT_BLOCK, false),
        Format::ApplyPatch => (APPLY_PATCH, false),
        Format::UnifiedDiff => (UNIFIED_DIFF, false),
        Format::WholeFile => (WHOLE_FILE, false),
        Format::StrReplace => (STR_REPLACE, false),
        Format::Anchored => (ANCHORED, false),
        _ => (SEARCH_REPLACE, true),
    };
    let mut out = String::from(body);
    out.push('\n');
    out.push_str(HABITS);
    if !elides {
        out.push_str(NO_ELISION);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::parse;

    /// Each prompt's example parses as its own format.
    #[test]
    fn examples_parse() {
        for f in [
            Format::SearchReplace,
            Format::EditBlock,
            Format::ApplyPatch,
            Format::UnifiedDiff,
            Format::WholeFile,
        ] {
            let text = prompt(f);
            let after_intro = text.split_once("\n\n").map_or("", |x| x.1);
            let example = after_intro
                .split("\n\n- ")
                .next()
                .unwrap_or_default()
                .to_owned()
                + "\n";
            let p = parse(&example, f).unwrap_or_else(|e| panic!("{f}: {e}\n{example}"));
            assert!(p.edits().count() >= 1, "{f}: {example}");
        }
    }
}
