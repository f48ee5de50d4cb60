//! Decoding file bytes to text and encoding them back, exactly.
//!
//! UTF-8 (with or without a BOM) is read as is; the BOM stays in the text
//! as U+FEFF, which mend-core keeps. UTF-16 with a BOM is decoded and
//! written back in the same byte order. Anything else is refused: mend never
//! substitutes U+FFFD, so a file it cannot represent exactly is not edited.

use serde::{Deserialize, Serialize};

/// How a file's bytes encode its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Encoding {
    /// UTF-8 (a BOM, if any, is part of the text).
    Utf8,
    /// UTF-16 little-endian with a BOM.
    Utf16Le,
    /// UTF-16 big-endian with a BOM.
    Utf16Be,
}

/// Why bytes are not editable text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Undecodable {
    Binary,
    NotText(String),
}

/// Decodes bytes; the result round-trips through [`encode`].
pub(crate) fn decode(bytes: &[u8]) -> Result<(String, Encoding), Undecodable> {
    let utf16 = |le: bool| -> Result<String, Undecodable> {
        if !bytes.len().is_multiple_of(2) {
            return Err(Undecodable::NotText(
                "UTF-16 with an odd number of bytes".into(),
            ));
        }
        let units: Vec<u16> = bytes
            .chunks_exact(2)
            .map(|c| {
                if le {
                    u16::from_le_bytes([c[0], c[1]])
                } else {
                    u16::from_be_bytes([c[0], c[1]])
                }
            })
            .collect();
        String::from_utf16(&units)
            .map_err(|_| Undecodable::NotText("UTF-16 with an unpaired surrogate".into()))
    };
    // UTF-32LE's BOM begins with UTF-16LE's, so it is checked first.
    if bytes.starts_with(&[0xFF, 0xFE, 0x00, 0x00]) {
        return Err(Undecodable::NotText("UTF-32LE (BOM FF FE 00 00)".into()));
    }
    if bytes.starts_with(&[0x00, 0x00, 0xFE, 0xFF]) {
        return Err(Undecodable::NotText("UTF-32BE (BOM 00 00 FE FF)".into()));
    }
    if bytes.starts_with(&[0xFF, 0xFE]) {
        return utf16(true).map(|s| (s, Encoding::Utf16Le));
    }
    if bytes.starts_with(&[0xFE, 0xFF]) {
        return utf16(false).map(|s| (s, Encoding::Utf16Be));
    }
    if bytes.iter().take(8192).any(|&b| b == 0) {
        return Err(Undecodable::Binary);
    }
    match std::str::from_utf8(bytes) {
        Ok(s) => Ok((s.to_owned(), Encoding::Utf8)),
        Err(e) => {
            // Many control bytes: binary. Otherwise legacy 8-bit text.
            let controls = bytes
                .iter()
                .take(8192)
                .filter(|&&b| b < 0x20 && !matches!(b, b'\n' | b'\r' | b'\t' | 0x0c))
                .count();
            if controls * 10 > bytes.len().min(8192) {
                Err(Undecodable::Binary)
            } else {
                Err(Undecodable::NotText(format!(
                    "invalid UTF-8 at byte {}",
                    e.valid_up_to()
                )))
            }
        }
    }
}

/// Encodes text back into bytes.
pub(crate) fn encode(text: &str, encoding: Encoding) -> Vec<u8> {
    match encoding {
        Encoding::Utf8 => text.as_bytes().to_vec(),
        Encoding::Utf16Le => text.encode_utf16().flat_map(u16::to_le_bytes).collect(),
        Encoding::Utf16Be => text.encode_utf16().flat_map(u16::to_be_bytes).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        for (bytes, enc) in [
            (b"plain\r\n".to_vec(), Encoding::Utf8),
            (b"\xEF\xBB\xBFbom\n".to_vec(), Encoding::Utf8),
            (
                vec![0xFF, 0xFE, b'h', 0, b'i', 0, b'\n', 0],
                Encoding::Utf16Le,
            ),
            (vec![0xFE, 0xFF, 0, b'h', 0, b'i'], Encoding::Utf16Be),
        ] {
            let (text, e) = decode(&bytes).unwrap();
            assert_eq!(e, enc);
            assert_eq!(encode(&text, e), bytes);
        }
    }

    #[test]
    fn refuses_binary_and_latin1() {
        assert_eq!(decode(b"\x89PNG\r\n\x1a\n\0\0"), Err(Undecodable::Binary));
        assert!(matches!(decode(b"caf\xe9\n"), Err(Undecodable::NotText(_))));
        assert!(matches!(
            decode(&[0xFF, 0xFE, 0x00]),
            Err(Undecodable::NotText(_))
        ));
        for utf32 in [
            vec![0xFF, 0xFE, 0, 0, b'h', 0, 0, 0],
            vec![0, 0, 0xFE, 0xFF, 0, 0, 0, b'h'],
        ] {
            match decode(&utf32) {
                Err(Undecodable::NotText(d)) => assert!(d.starts_with("UTF-32"), "{d}"),
                other => panic!("{other:?}"),
            }
        }
    }
}
