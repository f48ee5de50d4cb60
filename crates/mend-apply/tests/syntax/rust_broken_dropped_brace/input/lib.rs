use std::collections::HashMap;

pub struct Counter {
    counts: HashMap<String, usize>,
}

impl Counter {
    pub fn add(&mut self, word: &str) {
        *self.counts.entry(word.to_owned()).or_default() += 1;
    }

    pub fn get(&self, word: &str) -> usize {
        self.counts.get(word).copied().unwrap_or(0)
    }
}
