//! The library's value enums as command-line values: each implements
//! [`Choice`] once here, from the library's own list of variants, and the
//! CLI parses them with [`parser`]. A variant added to the library reaches
//! every flag that takes the enum, or fails to compile here.

use std::marker::PhantomData;

use clap::builder::{PossibleValue, TypedValueParser};
use mend_core::formats::Format;
use mend_core::report::syntax::SyntaxPolicy;
use mend_merge::Adjacent;
use mend_pending::Against;

/// A library enum a person names by a word.
pub trait Choice: Copy + Send + Sync + 'static {
    /// Every value, in the order help lists them.
    fn choices() -> Vec<Self>;
    /// Its word on the command line and in protocols.
    fn name(self) -> &'static str;
    /// One line of help.
    fn help(self) -> &'static str;

    /// The value named `word`.
    fn named(word: &str) -> Option<Self> {
        Self::choices().into_iter().find(|c| c.name() == word)
    }

    /// The words, as `a`, `b` or `c`, for a message.
    fn spelled() -> String {
        let words: Vec<String> = Self::choices()
            .into_iter()
            .map(|c| format!("\"{}\"", c.name()))
            .collect();
        match words.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
            _ => words.concat(),
        }
    }
}

impl Choice for Format {
    fn choices() -> Vec<Self> {
        std::iter::once(Format::Auto).chain(Format::ALL).collect()
    }
    fn name(self) -> &'static str {
        Format::name(self)
    }
    fn help(self) -> &'static str {
        match self {
            Format::Auto => "Decide per block",
            Format::SearchReplace => "SEARCH/REPLACE blocks (aider, Roo Code, Cline)",
            Format::StrReplace => "old_string/new_string JSON",
            Format::Anchored => "modify_file/write_file JSON (anchored regions)",
            Format::EditBlock => "««« EDIT / ═══════ REPL / »»» EDIT END blocks",
            Format::ApplyPatch => "Codex *** Begin Patch envelopes",
            Format::UnifiedDiff => "Unified diffs",
            Format::WholeFile => "A path line and a fence holding the whole file",
            // A format added to the library is offered under its name.
            _ => "",
        }
    }
}

impl Choice for SyntaxPolicy {
    fn choices() -> Vec<Self> {
        vec![SyntaxPolicy::Warn, SyntaxPolicy::Refuse, SyntaxPolicy::Off]
    }
    fn name(self) -> &'static str {
        match self {
            SyntaxPolicy::Warn => "warn",
            SyntaxPolicy::Refuse => "refuse",
            SyntaxPolicy::Off => "off",
        }
    }
    fn help(self) -> &'static str {
        match self {
            SyntaxPolicy::Warn => "Write the edits and report the finding",
            SyntaxPolicy::Refuse => "Write nothing and fail",
            SyntaxPolicy::Off => "Do not check",
        }
    }
}

impl Choice for Against {
    fn choices() -> Vec<Self> {
        vec![Against::Context, Against::Local]
    }
    fn name(self) -> &'static str {
        match self {
            Against::Context => "context",
            Against::Local => "local",
        }
    }
    fn help(self) -> &'static str {
        match self {
            Against::Context => "What the model saw",
            Against::Local => "The file as it is now",
        }
    }
}

impl Choice for Adjacent {
    fn choices() -> Vec<Self> {
        vec![Adjacent::Conflict, Adjacent::Merge]
    }
    fn name(self) -> &'static str {
        match self {
            Adjacent::Conflict => "conflict",
            Adjacent::Merge => "merge",
        }
    }
    fn help(self) -> &'static str {
        match self {
            Adjacent::Conflict => "Leave them in conflict, as git does",
            Adjacent::Merge => "Settle them where the inputs determine the result",
        }
    }
}

/// The clap parser of a [`Choice`]: `#[arg(value_parser = parser::<Format>())]`.
pub fn parser<T: Choice>() -> ChoiceParser<T> {
    ChoiceParser(PhantomData)
}

/// See [`parser`].
#[derive(Clone, Copy, Debug)]
pub struct ChoiceParser<T>(PhantomData<T>);

impl<T: Choice> TypedValueParser for ChoiceParser<T> {
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<T, clap::Error> {
        let word = value.to_string_lossy();
        T::named(&word).ok_or_else(|| {
            let mut err = clap::Error::new(clap::error::ErrorKind::InvalidValue).with_cmd(cmd);
            let ctx = clap::error::ContextKind::InvalidArg;
            let name = arg.map_or_else(|| "...".to_owned(), ToString::to_string);
            err.insert(ctx, clap::error::ContextValue::String(name));
            err.insert(
                clap::error::ContextKind::InvalidValue,
                clap::error::ContextValue::String(word.into_owned()),
            );
            let valid = T::choices().into_iter().map(|c| c.name().to_owned());
            err.insert(
                clap::error::ContextKind::ValidValue,
                clap::error::ContextValue::Strings(valid.collect()),
            );
            err
        })
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(
            T::choices()
                .into_iter()
                .map(|c| PossibleValue::new(c.name()).help(c.help())),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every value's word names it, and only it.
    fn round_trips<T: Choice + PartialEq + std::fmt::Debug>() {
        for c in T::choices() {
            assert_eq!(T::named(c.name()), Some(c));
            assert!(!c.help().is_empty(), "{c:?} has no help");
        }
        assert_eq!(T::named("no-such-word"), None);
    }

    #[test]
    fn every_choice_round_trips() {
        round_trips::<Format>();
        round_trips::<SyntaxPolicy>();
        round_trips::<Against>();
        round_trips::<Adjacent>();
        assert_eq!(Against::spelled(), "\"context\" or \"local\"");
    }
}
