//! The structured resolver: changes in different syntax items.

use std::ops::Range;

use mend_syntax::{Language, Node, Parsed};

use super::{Conflict, Inputs, Resolver, SideChange, collide};

/// Settles a conflict whose two sides change different syntax items of
/// one list of items, following the tree-sitter grammar of `language`.
///
/// The items are the children of the innermost *list of items* that holds
/// all of the conflict's changes: a file's top level, a class, impl, trait
/// or interface body, an import list, the entries of an array, object,
/// table or mapping (not a function's body: two edits in one function
/// are one item changed twice). Children that share a line are one item,
/// and a line no child is on (a blank line) is an item of its own. The
/// base's items over the conflict, and each side's items over the same
/// lines, are diffed as lists of items; when no item is changed by both
/// sides (or both changed it the same way), each item comes from the side
/// that changed it and new items stay between the same two base items as
/// on their side. The inputs fix that result: nothing is chosen. What
/// stays a conflict:
/// - an item both sides change differently;
/// - an insertion beside or inside an item the other side changed: where
///   the new item goes against the rewritten one is a choice people make
///   either way (on real history they did, as often as not); and lines
///   one side inserts where the other side's lines change, even when the
///   grammar makes them part of the item before (entries at the end of a
///   table), unless both inserted items at one point that join unordered;
/// - both sides inserting at one point, unless every new item is an
///   import or an entry of a table or mapping, whose order does not
///   matter, and the base's items around the point are sorted: those are
///   written in sorted order, and an item both wrote is written once
///   (unsorted, which side's go first is a choice);
/// - both sides writing the same new item in different places;
/// - a side whose lines around the conflict are not whole items of a list
///   of the same kind, an item left without a final newline before
///   another, any input that does not parse without errors, is not UTF-8
///   or is larger than 1 MiB, a list of more than 1,000 items, a merge
///   of more than 200 conflicts (the work per conflict walks its list);
/// - both sides' new entries or imports that share a name (a key given
///   two values, one name imported from two places);
/// - coupled changes: a word one side's change takes out (a name, a flag)
///   that the other side's changed items still hold;
/// - changes with only blank items between them, when one writes or
///   removes a blank item or both insert: whether the separator between
///   them is kept once, twice or not at all is a choice;
/// - a region whose merged file does not parse.
#[derive(Debug, Clone, Copy)]
pub struct StructuredResolver {
    /// The grammar the items come from.
    pub language: Language,
}

impl Resolver for StructuredResolver {
    fn name(&self) -> &'static str {
        "structured"
    }

    fn resolve(&self, inputs: Inputs<'_>, conflicts: &[Conflict]) -> Vec<Option<Vec<u8>>> {
        let none = vec![None; conflicts.len()];
        if conflicts.len() > MAX_CONFLICTS {
            return none;
        }
        let Some(trees) = Trees::parse(self.language, &inputs) else {
            return none;
        };
        let files = super::files(&inputs);
        let answers: Vec<Option<Vec<u8>>> = conflicts
            .iter()
            .map(|c| resolve_one(&inputs, (&trees, &files), c))
            .collect();
        if answers.iter().all(Option::is_none) {
            return answers;
        }
        keep_parsing(self.language, (&inputs, &trees), conflicts, answers)
    }
}

/// The three parses, each of a whole input, with the text of ours (the
/// merged file's parse is reached from it).
struct Trees {
    base: Parsed,
    ours: Parsed,
    theirs: Parsed,
    ours_text: String,
}

impl Trees {
    /// The inputs' trees, when all three parse without errors. Base is
    /// parsed once; ours and theirs are reached from it by incremental
    /// reparse, parsing only what each side changed.
    fn parse(lang: Language, inputs: &Inputs<'_>) -> Option<Trees> {
        let size = |lines: &[&[u8]]| lines.iter().map(|l| l.len()).sum::<usize>();
        if [inputs.base, inputs.ours, inputs.theirs]
            .iter()
            .any(|l| size(l) > MAX_INPUT_BYTES)
        {
            return None;
        }
        let text = |lines: &[&[u8]]| String::from_utf8(lines.concat()).ok();
        let (b, o, t) = (text(inputs.base)?, text(inputs.ours)?, text(inputs.theirs)?);
        let base = mend_syntax::parse(lang, &b).filter(|p| p.clean)?;
        let side = |s: &str| mend_syntax::parse_from(lang, &b, &base, s).filter(|p| p.clean);
        let (ours, theirs) = (side(&o)?, side(&t)?);
        Some(Trees {
            base,
            ours,
            theirs,
            ours_text: o,
        })
    }

    /// Whether `text` parses without errors, reached from ours' parse.
    fn parses(&self, lang: Language, text: &str) -> bool {
        mend_syntax::parse_from(lang, &self.ours_text, &self.ours, text).is_some_and(|p| p.clean)
    }
}

/// The rows a node's text is on, first and last (inclusive). A node that
/// ends at the start of a row (its text ends with a newline) is not on it.
fn rows(n: Node<'_>) -> (usize, usize) {
    let (s, e) = (n.start_position(), n.end_position());
    let last = if e.column == 0 && e.row > s.row {
        e.row - 1
    } else {
        e.row
    };
    (s.row, last)
}

/// The innermost list of items whose rows hold `lo..=hi`, or the root.
fn container<'t>(root: Node<'t>, lo: usize, hi: usize) -> Node<'t> {
    let mut node = root;
    'down: loop {
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            let (f, l) = rows(child);
            if f <= lo && hi <= l {
                node = child;
                continue 'down;
            }
        }
        break;
    }
    while !is_list(node) {
        match node.parent() {
            Some(p) => node = p,
            None => break,
        }
    }
    node
}

/// Node kinds whose children are items merged one by one: lists of
/// declarations, imports or entries (the root is one too).
const LISTS: &[&str] = &[
    // Class, impl, trait, interface, struct and enum bodies.
    "declaration_list",
    "class_body",
    "interface_body",
    "enum_body",
    "field_declaration_list",
    "enum_variant_list",
    "object_type",
    // Imports.
    "use_list",
    "named_imports",
    "import_from_statement",
    "import_spec_list",
    // Entries.
    "array",
    "array_expression",
    "object",
    "list",
    "set",
    "dictionary",
    "table",
    "inline_table",
    "block_mapping",
    "block_sequence",
    "flow_mapping",
    "flow_sequence",
];

fn is_list(n: Node<'_>) -> bool {
    let Some(parent) = n.parent() else {
        return true;
    };
    // Python's class body is a `block`, as a function's body is.
    LISTS.contains(&n.kind()) || (n.kind() == "block" && parent.kind() == "class_definition")
}

/// Kinds of item whose order among their own kind does not matter.
const UNORDERED: &[&str] = &[
    "import_statement",
    "import_from_statement",
    "future_import_statement",
    "use_declaration",
    "import_declaration",
    "import_spec",
    "preproc_include",
    "using_directive",
    "pair",
    "block_mapping_pair",
    "flow_pair",
];

/// The items of a list: row spans (end-exclusive) covering its rows in
/// order; children sharing a row are one item, and a row no child is on
/// is an item of its own.
fn items(list: Node<'_>, rows_total: usize) -> Vec<Range<usize>> {
    if rows_total == 0 {
        return Vec::new();
    }
    let (first, last) = if list.parent().is_none() {
        (0, rows_total - 1)
    } else {
        rows(list)
    };
    let last = last.min(rows_total - 1);
    let mut spans: Vec<Range<usize>> = Vec::new();
    let mut cursor = list.walk();
    for child in list.children(&mut cursor) {
        // A node can end on the row after the last line (an empty one).
        let (f, l) = rows(child);
        let (f, l) = (f.min(last), l.min(last));
        match spans.last_mut() {
            Some(s) if f < s.end => s.end = s.end.max(l + 1),
            _ => spans.push(f..l + 1),
        }
    }
    let mut out = Vec::new();
    let mut at = first;
    for s in spans {
        out.extend((at..s.start).map(|r| r..r + 1));
        at = at.max(s.start);
        out.push(at..s.end);
        at = s.end;
    }
    out.extend((at..=last).map(|r| r..r + 1));
    out
}

/// Whether every named child of `list` on rows `r` is an item whose order
/// does not matter (and there is one).
fn all_unordered(list: Node<'_>, r: &Range<usize>) -> bool {
    let mut cursor = list.walk();
    let mut named = list
        .named_children(&mut cursor)
        .filter(|n| r.contains(&rows(*n).0))
        .peekable();
    named.peek().is_some() && named.all(|n| UNORDERED.contains(&n.kind()))
}

/// One version's items over the rows a conflict needs: each item's text
/// and whether its order among its kind does not matter.
#[derive(Debug, Default)]
struct Window {
    texts: Vec<Vec<u8>>,
    /// Each item's [`key`]: items are diffed by it, so that a separator
    /// comma or indentation added to an item does not hide that it stayed.
    keys: Vec<Vec<u8>>,
    unordered: Vec<bool>,
    /// For the base: the unordered items just outside the window, nearest
    /// first, before it and after it (they tell whether the list is kept
    /// sorted).
    around: [Vec<Vec<u8>>; 2],
}

impl Window {
    fn keys(&self) -> Vec<&[u8]> {
        self.keys.iter().map(Vec::as_slice).collect()
    }
}

/// The items of `list` on rows `rows`, which they must tile.
fn window_of(list: Node<'_>, lines: &[&[u8]], rows: &Range<usize>) -> Option<Window> {
    let mut w = Window::default();
    let mut at = rows.start;
    for r in items(list, lines.len()) {
        if r.end <= rows.start || rows.end <= r.start {
            continue;
        }
        if r.start != at || r.end > rows.end {
            return None;
        }
        w.unordered.push(all_unordered(list, &r));
        w.texts.push(lines[r.clone()].concat());
        w.keys.push(key(&lines[r.clone()].concat()));
        at = r.end;
    }
    (at == rows.end).then_some(w)
}

/// A side's window: its rows that stand where the base's rows `base` do
/// (the conflict's rows plus the unchanged rows around it), read as items
/// of a list of the base list's kind.
fn side_window(
    side: (&[&[u8]], &Parsed, Range<usize>),
    base: (&[&[u8]], Range<usize>, Range<usize>),
    kind: &str,
) -> Option<Window> {
    let (lines, parsed, region) = side;
    let (base_lines, window, base_region) = base;
    let before = base_region.start - window.start;
    let after = window.end - base_region.end;
    let rows = region.start.checked_sub(before)?..region.end + after;
    if rows.end > lines.len()
        || lines[rows.start..region.start] != base_lines[window.start..base_region.start]
        || lines[region.end..rows.end] != base_lines[base_region.end..window.end]
    {
        return None;
    }
    if rows.is_empty() {
        return Some(Window::default());
    }
    // The rows on either side of the window too, where there are some.
    let lo = rows.start.saturating_sub(1);
    let hi = rows.end.min(lines.len() - 1);
    let list = container(parsed.tree.root_node(), lo, hi);
    (list.kind() == kind).then_some(())?;
    window_of(list, lines, &rows)
}

fn resolve_one(
    inputs: &Inputs<'_>,
    (trees, files): (&Trees, &super::Files<'_>),
    c: &Conflict,
) -> Option<Vec<u8>> {
    let all: Vec<&SideChange> = c.ours_changes.iter().chain(&c.theirs_changes).collect();
    // The rows the changes need inside one list: an insertion needs the
    // rows on both sides of it.
    let lo = all
        .iter()
        .map(|x| x.base.start.saturating_sub(usize::from(x.base.is_empty())))
        .min()?;
    let hi = all
        .iter()
        .map(|x| x.base.end.max(x.base.start + 1) - 1 + usize::from(x.base.is_empty()))
        .max()?
        .min(inputs.base.len().saturating_sub(1));
    let root = trees.base.tree.root_node();
    let list = container(root, lo, hi);
    if list.child_count() > MAX_ITEMS {
        return None;
    }
    let spans = items(list, inputs.base.len());
    let touched: Vec<&Range<usize>> = spans
        .iter()
        .filter(|r| r.start <= hi && lo < r.end)
        .collect();
    let window = touched.first()?.start.min(c.base.start)..touched.last()?.end.max(c.base.end);
    let mut base = window_of(list, inputs.base, &window)?;
    let run = |rs: &mut dyn Iterator<Item = &Range<usize>>| -> Vec<Vec<u8>> {
        rs.take_while(|r| all_unordered(list, r))
            .map(|r| key(&inputs.base[r.clone()].concat()))
            .collect()
    };
    base.around = [
        run(&mut spans.iter().rev().filter(|r| r.end <= window.start)),
        run(&mut spans.iter().filter(|r| r.start >= window.end)),
    ];
    let b = (inputs.base, window.clone(), c.base.clone());
    let ours = side_window(
        (inputs.ours, &trees.ours, c.ours.clone()),
        b.clone(),
        list.kind(),
    )?;
    let theirs = side_window(
        (inputs.theirs, &trees.theirs, c.theirs.clone()),
        b,
        list.kind(),
    )?;
    // Lines one side inserts where the other's change starts or ends (or
    // inserts too) have no order the base fixes; only an unordered join of
    // items inserted at one point may settle them.
    let clash = c.ours_changes.iter().any(|x| {
        c.theirs_changes
            .iter()
            .any(|y| (x.base.is_empty() || y.base.is_empty()) && collide(&x.base, &y.base))
    });
    let (out, joined) = merge_items(&base, &ours, &theirs, files)?;
    if clash && !joined {
        return None;
    }
    let before = inputs.base[window.start..c.base.start].concat();
    let after = inputs.base[c.base.end..window.end].concat();
    let at_end = window.end == inputs.base.len();
    if !(out.starts_with(&before) && out.ends_with(&after))
        || out.len() < before.len() + after.len()
        || (!at_end && !out.is_empty() && !out.ends_with(b"\n"))
    {
        return None;
    }
    Some(out[before.len()..out.len() - after.len()].to_vec())
}

/// The three-way merge of item lists: each side's item changes against the
/// base, taken when no item is changed by both (an identical change of
/// both is taken once) and no insertion lands beside or inside the other
/// side's change; two insertions at one point only as [`unordered`] allows
/// (the `bool`: whether such a join was made).
fn merge_items(
    base: &Window,
    ours: &Window,
    theirs: &Window,
    files: &super::Files<'_>,
) -> Option<(Vec<u8>, bool)> {
    let d1 = crate::diff_lines(&base.keys(), &ours.keys());
    let d2 = crate::diff_lines(&base.keys(), &theirs.keys());
    let kept = kept_items(base, (ours, &d1), (theirs, &d2))?;
    let new = |w: &Window, x: &crate::Change| w.texts[x.s..x.s + x.slen].to_vec();
    let same = |x: &crate::Change, y: &crate::Change| {
        (x.b, x.blen) == (y.b, y.blen) && new(ours, x) == new(theirs, y)
    };
    let d2: Vec<crate::Change> = d2
        .into_iter()
        .filter(|y| !d1.iter().any(|x| same(x, y)))
        .collect();
    // (base position, base length, items written)
    let mut parts: Vec<(usize, usize, Vec<Vec<u8>>)> = Vec::new();
    for x in &d1 {
        parts.push((x.b, x.blen, new(ours, x)));
    }
    let mut apart = (vec![true; d1.len()], vec![true; d2.len()]);
    for (j, y) in d2.iter().enumerate() {
        let mut joined = false;
        for (k, x) in d1.iter().enumerate() {
            let together = x.blen == 0 && y.blen == 0 && x.b == y.b;
            if together {
                let sides = (
                    &ours.unordered[x.s..x.s + x.slen],
                    &theirs.unordered[y.s..y.s + y.slen],
                );
                parts[k].2 = unordered(base, x.b, (&parts[k].2, &new(theirs, y)), sides)?;
                joined = true;
                (apart.0[k], apart.1[j]) = (false, false);
            } else if collide(&(x.b..x.b + x.blen), &(y.b..y.b + y.blen))
                || tied(base, (ours, x), (theirs, y), files)
            {
                return None;
            }
        }
        if !joined {
            parts.push((y.b, y.blen, new(theirs, y)));
        }
    }
    // Items both inserted at one point were written once above.
    let keep = |d: &[crate::Change], apart: &[bool]| -> Vec<crate::Change> {
        d.iter()
            .zip(apart)
            .filter(|(_, a)| **a)
            .map(|(x, _)| *x)
            .collect()
    };
    let joined = apart.0.iter().chain(&apart.1).any(|a| !a);
    if echoes(&keep(&d1, &apart.0), &keep(&d2, &apart.1), ours, theirs) {
        return None;
    }
    parts.sort_by_key(|p| (p.0, p.1));
    let mut out: Vec<&[u8]> = Vec::new();
    let mut at = 0;
    for (b, blen, items) in &parts {
        out.extend(kept[at..*b].iter().map(|t| t.as_slice()));
        out.extend(items.iter().map(Vec::as_slice));
        at = b + blen;
    }
    out.extend(kept[at..].iter().map(|t| t.as_slice()));
    // An item without a newline (the end of its file) must stay last.
    let n = out.len();
    if out
        .iter()
        .take(n.saturating_sub(1))
        .any(|i| !i.ends_with(b"\n"))
    {
        return None;
    }
    Some((out.concat(), joined))
}

/// Each base item's text where no side changed its key: the base's, or
/// the one side's that changed its separator or indentation (both only
/// the same way). `None` when a side changed that much of an item the
/// other side rewrote or removed, or both changed it differently, or the
/// side's text adds or drops a blank line (a separator, whose place and
/// count next to the other side's change is a choice).
fn kept_items<'w>(
    base: &'w Window,
    (ours, d1): (&'w Window, &[crate::Change]),
    (theirs, d2): (&'w Window, &[crate::Change]),
) -> Option<Vec<&'w Vec<u8>>> {
    let o = align(d1, base.texts.len());
    let t = align(d2, base.texts.len());
    let mut out = Vec::with_capacity(base.texts.len());
    for (k, b) in base.texts.iter().enumerate() {
        let o = o[k].map(|j| &ours.texts[j]);
        let t = t[k].map(|j| &theirs.texts[j]);
        let text = match (o, t) {
            (Some(o), Some(t)) if o == b || o == t => t,
            (Some(o), Some(t)) if t == b => o,
            (Some(_), Some(_)) => return None,
            (Some(x), None) | (None, Some(x)) if x != b => return None,
            _ => b,
        };
        if blank_lines(&[text]) != blank_lines(&[b]) {
            return None;
        }
        out.push(text);
    }
    Some(out)
}

/// How many blank lines items hold, whole items or inside one (a table's
/// trailing blank line is part of it).
fn blank_lines(items: &[&[u8]]) -> usize {
    items
        .iter()
        .flat_map(|t| t.split_inclusive(|b| *b == b'\n'))
        .filter(|l| super::is_blank(l))
        .count()
}

/// Whether ours' item change `x` and theirs' `y` depend on each other, so
/// that taking both is not determined: a word one takes out that the
/// other's items still hold (see [`super::coupled`]); or changes that
/// meet (touch, or have only blank items between them) when one changes
/// how many blank lines its items hold or both insert: a separator whose
/// place and count is a choice.
fn tied(
    base: &Window,
    (ours, x): (&Window, &crate::Change),
    (theirs, y): (&Window, &crate::Change),
    files: &super::Files<'_>,
) -> bool {
    fn items(w: &Window, r: Range<usize>) -> Vec<&[u8]> {
        w.texts[r].iter().map(Vec::as_slice).collect()
    }
    let (xb, xn) = (
        items(base, x.b..x.b + x.blen),
        items(ours, x.s..x.s + x.slen),
    );
    let (yb, yn) = (
        items(base, y.b..y.b + y.blen),
        items(theirs, y.s..y.s + y.slen),
    );
    if super::coupled((&xb, &xn, &files[0]), (&yb, &yn, &files[1])) {
        return true;
    }
    let separating = blank_lines(&xb) != blank_lines(&xn) || blank_lines(&yb) != blank_lines(&yn);
    let inserting = x.blen == 0 && y.blen == 0;
    let (wx, wy) = (widened(base, x), widened(base, y));
    (separating || inserting) && wx.start <= wy.end && wy.start <= wx.end
}

/// A change's base items, widened over the blank items on either side.
fn widened(base: &Window, x: &crate::Change) -> Range<usize> {
    let blank = |k: usize| super::is_blank(&base.texts[k]);
    let (mut lo, mut hi) = (x.b, x.b + x.blen);
    while lo > 0 && blank(lo - 1) {
        lo -= 1;
    }
    while hi < base.texts.len() && blank(hi) {
        hi += 1;
    }
    lo..hi
}

/// For each base item, the side item it stayed as (`None` inside a
/// change).
fn align(d: &[crate::Change], n: usize) -> Vec<Option<usize>> {
    let mut out = vec![None; n];
    let (mut b, mut s) = (0, 0);
    for x in d.iter().chain(std::iter::once(&crate::Change {
        b: n,
        blen: 0,
        s: usize::MAX,
        slen: 0,
    })) {
        while b < x.b {
            out[b] = Some(s);
            b += 1;
            s += 1;
        }
        b = x.b + x.blen;
        s = x.s.saturating_add(x.slen);
    }
    out
}

/// Whether both sides write a new item (one with a letter or digit) that
/// the other also writes elsewhere: the same change made in two places.
fn echoes(d1: &[crate::Change], d2: &[crate::Change], ours: &Window, theirs: &Window) -> bool {
    let new = |w: &Window, d: &[crate::Change]| -> Vec<Vec<u8>> {
        d.iter()
            .flat_map(|x| w.texts[x.s..x.s + x.slen].iter())
            .map(|t| t.trim_ascii().to_vec())
            .filter(|t| super::has_alnum(t))
            .collect()
    };
    let o = new(ours, d1);
    new(theirs, d2).iter().any(|t| o.contains(t))
}

/// An unordered item's sort key: its text without the indentation, the
/// line ending or a separating comma.
fn key(item: &[u8]) -> Vec<u8> {
    let t = item.trim_ascii();
    t.strip_suffix(b",").unwrap_or(t).to_vec()
}

/// The items both sides inserted at one point `p` of the base's items
/// (`new`: ours' and theirs'; `kinds`: whether each is an unordered
/// kind), when all of them are items whose order does not matter and the
/// base's items of that kind around the point are sorted (at least two,
/// in order): written sorted, an item both wrote once.
fn unordered(
    base: &Window,
    p: usize,
    new: (&[Vec<u8>], &[Vec<u8>]),
    kinds: (&[bool], &[bool]),
) -> Option<Vec<Vec<u8>>> {
    if !kinds.0.iter().chain(kinds.1).all(|&u| u) {
        return None;
    }
    let run = |range: &mut dyn Iterator<Item = usize>, around: &[Vec<u8>]| -> Vec<Vec<u8>> {
        let mut keys = Vec::new();
        for k in range {
            if !base.unordered[k] {
                return keys;
            }
            keys.push(key(&base.texts[k]));
        }
        keys.extend(around.iter().cloned());
        keys
    };
    let before = run(&mut (0..p).rev(), &base.around[0]);
    let after = run(&mut (p..base.texts.len()), &base.around[1]);
    let keys: Vec<&Vec<u8>> = before.iter().rev().chain(&after).collect();
    let sorted = keys.len() >= 2 && keys.windows(2).all(|w| w[0] <= w[1]);
    // Unsorted, which side's items go first is a choice the inputs do not
    // make.
    if !sorted || binds_a_common_name(new) {
        return None;
    }
    let mut out: Vec<Vec<u8>> = Vec::new();
    for item in new.0.iter().chain(new.1) {
        if !out.contains(item) {
            out.push(item.clone());
        }
    }
    if sorted {
        out.sort_by_key(|i| key(i));
        let first = key(out.first()?);
        let last = key(out.last()?);
        let fits =
            before.first().is_none_or(|b| *b <= first) && after.first().is_none_or(|a| last <= *a);
        if !fits {
            return None;
        }
    }
    Some(out)
}

/// Words that say what kind of item a line is rather than what it names:
/// two imports both starting `use std::` name nothing in common.
const KIND_WORDS: &[&str] = &[
    "import",
    "from",
    "use",
    "as",
    "pub",
    "crate",
    "self",
    "super",
    "std",
    "const",
    "let",
    "var",
    "require",
    "type",
    "export",
    "default",
    "static",
    "mod",
    "extern",
    "include",
    "using",
    "namespace",
    "true",
    "false",
    "null",
    "None",
    "True",
    "False",
];

/// Whether an item only ours inserted and one only theirs inserted share a
/// name (a word that is not a [`KIND_WORDS`] one): the same key of a table
/// or mapping given two values, the same name imported from two places.
/// Keeping both would repeat a key or a binding, which the language
/// rejects or silently resolves to one of them: that is a conflict.
fn binds_a_common_name(new: (&[Vec<u8>], &[Vec<u8>])) -> bool {
    let only = |xs: &[Vec<u8>], others: &[Vec<u8>]| -> Vec<Vec<u8>> {
        xs.iter().filter(|x| !others.contains(x)).cloned().collect()
    };
    let (ours, theirs) = (only(new.0, new.1), only(new.1, new.0));
    ours.iter().any(|o| {
        let mine = names(o);
        theirs
            .iter()
            .any(|t| names(t).iter().any(|n| mine.contains(n)))
    })
}

/// The names an item binds: an entry's key (the text before its first
/// `=` or lone `:`, quotes included, as JSON keys are quoted), or else
/// the words outside string literals (an import's names, not the path it
/// imports from); [`KIND_WORDS`] left out.
fn names(item: &[u8]) -> std::collections::HashSet<Vec<u8>> {
    let key_end = (0..item.len()).find(|&i| {
        let c = item[i];
        c == b'='
            || (c == b':' && item.get(i + 1) != Some(&b':') && (i == 0 || item[i - 1] != b':'))
    });
    let mut text: Vec<u8> = match key_end {
        Some(end) => item[..end].to_vec(),
        None => Vec::new(),
    };
    if key_end.is_none() {
        let mut quote: Option<u8> = None;
        for &c in item {
            match quote {
                Some(q) if c == q => quote = None,
                Some(_) => {}
                None if matches!(c, b'"' | b'\'' | b'`') => quote = Some(c),
                None => text.push(c),
            }
        }
    }
    text.split(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
        .filter(|w| {
            w.first()
                .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
        })
        .filter(|w| !KIND_WORDS.iter().any(|k| k.as_bytes() == *w))
        .map(<[u8]>::to_vec)
        .collect()
}

/// A conflict in a list of more items than this is left to git: finding
/// its items walks the list, for each conflict.
const MAX_ITEMS: u32 = 1_000;

/// Inputs larger than this are left to git: a parser's error recovery
/// over megabytes of text that does not parse can take seconds.
const MAX_INPUT_BYTES: usize = 1 << 20;

/// At most this many settled regions are tried one by one when together
/// they leave the file unparsable; past it none is kept.
const MAX_ALONE: usize = 8;

/// A merge with more conflicts than this is left to git: the syntax work
/// per conflict grows with the file, so thousands of conflicts in a large
/// file would take minutes.
const MAX_CONFLICTS: usize = 200;

/// The answers whose regions leave the merged file parsing. Each settled
/// region is written into the merge git makes of the rest (ours' lines
/// stand in for the regions left in conflict); when the whole does not
/// parse, each region is tried alone, and the ones that parse alone are
/// kept if they still parse together.
fn keep_parsing(
    lang: Language,
    (inputs, trees): (&Inputs<'_>, &Trees),
    conflicts: &[Conflict],
    mut answers: Vec<Option<Vec<u8>>>,
) -> Vec<Option<Vec<u8>>> {
    let parses = |answers: &[Option<Vec<u8>>]| -> bool {
        String::from_utf8(merged(inputs, conflicts, answers)).is_ok_and(|t| trees.parses(lang, &t))
    };
    if parses(&answers) {
        return answers;
    }
    // Trying each region alone costs a parse of the whole file each.
    if answers.iter().flatten().count() > MAX_ALONE {
        return vec![None; conflicts.len()];
    }
    let alone: Vec<bool> = (0..answers.len())
        .map(|k| {
            answers[k].is_some() && {
                let mut one = vec![None; answers.len()];
                one[k] = answers[k].clone();
                parses(&one)
            }
        })
        .collect();
    for (a, ok) in answers.iter_mut().zip(alone) {
        if !ok {
            *a = None;
        }
    }
    if parses(&answers) {
        answers
    } else {
        vec![None; conflicts.len()]
    }
}

/// The merged file with `answers` written in: git's merge of everything
/// outside the conflicts, and ours' lines for a conflict left unsettled.
fn merged(inputs: &Inputs<'_>, conflicts: &[Conflict], answers: &[Option<Vec<u8>>]) -> Vec<u8> {
    let (b, o, t) = (
        inputs.base.concat(),
        inputs.ours.concat(),
        inputs.theirs.concat(),
    );
    let opts = crate::Options {
        style: crate::Style::Diff3,
        ..crate::Options::default()
    };
    let m = crate::merge(&b, &o, &t, &opts);
    if let Some(whole) = m.whole {
        return whole.to_vec();
    }
    let mut out = Vec::new();
    for r in m.regions() {
        let lines = match r.kind {
            crate::RegionKind::Unchanged => &inputs.base[r.base.clone()],
            crate::RegionKind::Theirs => &inputs.theirs[r.theirs.clone()],
            crate::RegionKind::Conflict => {
                let settled = conflicts
                    .iter()
                    .zip(answers)
                    .find(|(c, _)| c.base == r.base && c.ours == r.ours);
                if let Some((_, Some(bytes))) = settled {
                    out.extend_from_slice(bytes);
                    continue;
                }
                &inputs.ours[r.ours.clone()]
            }
            _ => &inputs.ours[r.ours.clone()],
        };
        out.extend(lines.concat());
    }
    out
}
