//! libFuzzer entry for `mrtr_fuzz::terminal` (the target and its oracle live there).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mrtr_fuzz::terminal::run(data));
