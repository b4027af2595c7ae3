//! Helpers shared by the property tests.

/// Cases per run: `default`, or `PROPTEST_CASES` when set (for a long soak).
pub fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
