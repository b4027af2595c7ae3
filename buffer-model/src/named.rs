//! Closed lists of words that name the values of a type — `dscp`/`dot1p`, `drop`/`forward`/
//! `alert`, `ect0`… — written once, next to the type, and used by every reader of them: the
//! YAML loader, the command line and the reports. A word not on the list is an error that
//! lists the words.

use std::fmt;

/// A type whose values have names.
pub trait Named: Sized + Copy + PartialEq + 'static {
    /// Every word and the value it names; the first word of a value is how it is written.
    const WORDS: &'static [(&'static str, Self)];

    /// The value `word` names.
    fn from_word(word: &str) -> Result<Self, WordError> {
        Self::WORDS
            .iter()
            .find(|(w, _)| *w == word)
            .map(|(_, v)| *v)
            .ok_or_else(|| WordError {
                input: word.to_string(),
                expected: Self::expected(),
            })
    }

    /// The word for this value.
    fn word(self) -> &'static str {
        Self::WORDS
            .iter()
            .find(|(_, v)| *v == self)
            .map(|(w, _)| *w)
            .expect("every value has a word")
    }

    /// "a, b or c": the words, each value once, for messages.
    fn expected() -> String {
        let mut words: Vec<&str> = Vec::new();
        for (w, v) in Self::WORDS {
            if !Self::WORDS
                .iter()
                .any(|(w2, v2)| v2 == v && w2 != w && words.contains(w2))
            {
                words.push(w);
            }
        }
        match words.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
            Some((last, _)) => last.to_string(),
            None => String::new(),
        }
    }
}

/// A word that names nothing on the list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WordError {
    /// The word given.
    pub input: String,
    /// The words allowed, "a, b or c".
    pub expected: String,
}

impl fmt::Display for WordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`: expected {}", self.input, self.expected)
    }
}

impl std::error::Error for WordError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Pfc {
        Honor,
        Ignore,
    }

    impl Named for Pfc {
        const WORDS: &'static [(&'static str, Pfc)] = &[
            ("honor", Pfc::Honor),
            ("honour", Pfc::Honor),
            ("ignore", Pfc::Ignore),
        ];
    }

    #[test]
    fn words_parse_print_and_list_each_value_once() {
        assert_eq!(Pfc::from_word("honour"), Ok(Pfc::Honor));
        assert_eq!(Pfc::Honor.word(), "honor");
        let e = Pfc::from_word("obey").unwrap_err();
        assert_eq!(e.to_string(), "`obey`: expected honor or ignore");
    }
}
