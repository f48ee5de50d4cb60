//! The stream parser on arbitrary text and arbitrary chunk boundaries: it
//! never panics, and however a response is split, it yields exactly what
//! parsing the whole text at once yields.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mend_core::formats::{Format, StreamParser};

fuzz_target!(|data: &[u8]| {
    let Some((&head, rest)) = data.split_first() else {
        return;
    };
    // Auto, then every concrete format.
    let modes: Vec<Format> = std::iter::once(Format::Auto).chain(Format::ALL).collect();
    let mode = modes[usize::from(head) % modes.len()];
    // The next bytes, up to the count in the head's high bits, pick the cuts.
    let ncuts = usize::from(head >> 4).min(rest.len());
    let (cuts, body) = rest.split_at(ncuts);
    let text = String::from_utf8_lossy(body);

    let mut whole = StreamParser::new(mode);
    let mut expected = whole.push(&text);
    let expected = whole.finish().map(|tail| {
        expected.extend(tail);
        expected
    });

    let mut at: Vec<usize> = cuts
        .iter()
        .map(|&c| floor_char_boundary(&text, text.len() * usize::from(c) / 255))
        .collect();
    at.push(0);
    at.push(text.len());
    at.sort_unstable();
    at.dedup();
    let mut parser = StreamParser::new(mode);
    let mut got = Vec::new();
    for w in at.windows(2) {
        got.extend(parser.push(&text[w[0]..w[1]]));
        let _ = parser.partial();
    }
    let got = parser.finish().map(|tail| {
        got.extend(tail);
        got
    });
    match (&expected, &got) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "chunking changed the events"),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
        _ => panic!("chunking changed the outcome: {expected:?} vs {got:?}"),
    }
});

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}
